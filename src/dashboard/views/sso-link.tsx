import type { SsoLinkView } from '../../services/identity/sso-service.js';
import { ActionForm, Time } from './components.js';

/**
 * The person's own link at the organisation's identity provider, and "Link my single sign-on account": the way
 * owners and admins link (never by e-mail), open to everyone. On the Security page and the single sign-on page.
 */
export function SsoLinkSection({ link, csrf, back }: { link: SsoLinkView; csrf: string; back: string }) {
  if (link.issuer === null) return null;
  return (
    <section aria-labelledby="sso-link-title" class="panel">
      <h2 id="sso-link-title">Your single sign-on</h2>
      {link.linked ? (
        <p>
          Your account is linked to <span class="break">{link.linked.email ?? 'an account without an email address'}</span> at{' '}
          <code class="break">{link.issuer}</code> since <Time iso={new Date(link.linked.createdAt).toISOString()} absolute />. That account signs you in with "Sign in with single sign-on".
        </p>
      ) : (
        <>
          <p>
            Your account is not linked to your organisation's identity provider (<code class="break">{link.issuer}</code>). Link it to sign in there and to confirm
            sensitive actions with it. You sign in at the provider once more; every owner is told.
          </p>
          <ActionForm action="/dashboard/sso/link" csrf={csrf} label="Link my single sign-on account" hidden={{ next: back }} secondary />
        </>
      )}
    </section>
  );
}
