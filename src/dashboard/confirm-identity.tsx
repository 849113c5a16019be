import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../errors.js';
import { CONFIRM_WINDOW_MS, CONFIRMATION_REQUIRED } from '../services/identity/confirmation.js';
import type { Services } from '../services/index.js';
import type { FactorsOf } from '../services/identity/two-step-service.js';
import { pageContext, safeDashboardPath, sendPage, type PageContext } from './context.js';
import { formErrors } from './form-validation.js';
import { CsrfField, errorFor, Field, type FormError } from './views/components.js';
import { Layout, PASSKEY_SCRIPTS } from './views/layout.js';

/** The fields "Confirm it's you" adds to the form it posts again; taken out before the original route sees the body. */
const PROOF_FIELDS = ['_confirm_password', '_confirm_code', '_confirm_passkey'] as const;

/**
 * Typed secrets are never written into the confirmation page (security review F9): a secret stays only in the
 * browser's form it was typed into. The page names what was left out, and after confirming the person types
 * it again on the original form (`_confirm_retype`), instead of the form going on without it.
 */
const SECRET_FIELDS: Readonly<Record<string, string>> = {
  client_secret: 'client secret',
  secret: 'signing secret',
  password: 'password',
  current_password: 'current password',
  new_password: 'new password',
};
const RETYPE_FIELD = '_confirm_retype';

/** A proof that was refused: the confirmation page again, with the reason. */
class ConfirmationFailed extends DomainError {
  constructor(cause: DomainError) {
    super(cause.status, cause.code, cause.message, cause.details, cause.headers);
  }
}

export function isConfirmationRefusal(error: unknown): error is DomainError {
  return error instanceof ConfirmationFailed || (error instanceof DomainError && error.code === CONFIRMATION_REQUIRED);
}

/**
 * For every unsafe dashboard request (after its CSRF check): when the body carries a proof of "Confirm it's
 * you", the proof is checked by the two-step service, the session is confirmed, and the proof's fields are
 * removed, so the original route goes on with the same request, as if it had never been interrupted.
 */
export async function confirmIdentity(services: Services, request: FastifyRequest): Promise<void> {
  const body = request.body as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object' || !PROOF_FIELDS.some((field) => field in body)) return;
  const [password, code, passkey] = PROOF_FIELDS.map((field) => {
    const value = body[field];
    delete body[field];
    return typeof value === 'string' ? value : '';
  }) as [string, string, string];
  const retype = typeof body[RETYPE_FIELD] === 'string' ? (body[RETYPE_FIELD] as string) : null;
  delete body[RETYPE_FIELD];
  const session = request.dashboard.session;
  if (!session || !request.dashboard.csrfSecret) return;
  try {
    const proof = passkey !== '' ? { kind: 'passkey' as const, response: passkey, browserSecret: request.dashboard.csrfSecret } : { kind: 'password' as const, password, code };
    const at = await services.twoStep.confirm(session.actor, proof);
    session.actor = { ...session.actor, confirmedAt: at };
  } catch (error) {
    if (error instanceof DomainError && error.status < 500) throw new ConfirmationFailed(error);
    throw error;
  }
  // Confirmed, but the form lacks the secret it held: back to it (its other fields come back too).
  if (retype !== null) throw new DomainError(409, 'retype_secret', `Confirmed. Type the ${SECRET_FIELDS[retype] ?? 'secret'} again and send the form: it is not carried through "Confirm it's you"`);
}

/** The page the interrupted form was on: where "Confirm with single sign-on" comes back to. */
function fromOf(body: unknown): string | null {
  return safeDashboardPath(body && typeof body === 'object' ? (body as Record<string, unknown>)._from : null);
}

/** The form's own fields (not its token, not the proof, not a typed secret), to post again after confirming. */
function originalFields(body: unknown): { fields: [string, string][]; left: string | null } {
  if (!body || typeof body !== 'object') return { fields: [], left: null };
  const fields: [string, string][] = [];
  let left: string | null = null;
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (name === '_csrf' || name === '_from' || name.startsWith('_confirm')) continue;
    if (name in SECRET_FIELDS) {
      if (typeof value === 'string' && value !== '') left = name;
      continue;
    }
    for (const item of Array.isArray(value) ? value : [value]) if (typeof item === 'string') fields.push([name, item]);
  }
  if (left !== null) fields.push([RETYPE_FIELD, left]);
  return { fields, left };
}

export async function sendConfirmPage(services: Services, request: FastifyRequest, reply: FastifyReply, error: DomainError): Promise<FastifyReply> {
  const page = pageContext(request);
  const factors = await services.twoStep.factors(page.actor.orgId, page.actor.userId);
  const sso = await services.sso.canConfirmWithSso(page.actor.orgId, page.actor.userId);
  const failed = error instanceof ConfirmationFailed;
  const errors = failed ? formErrors(error, { password: 'Password', code: 'Code' }).map((e) => ({ ...e, field: e.field ? `confirm-${e.field}` : null })) : undefined;
  if (error.headers) reply.headers(error.headers);
  const { fields, left } = originalFields(request.body);
  return sendPage(reply, <ConfirmPage page={page} action={request.url} fields={fields} left={left} factors={factors} sso={sso} from={fromOf(request.body)} errors={errors} />, failed ? error.status : 403);
}

/**
 * "Confirm it's you" (DASHBOARD 11): the password and a code, or a passkey; the form posts the interrupted
 * request again, to the same address, with its fields as they were typed.
 */
function ConfirmPage({ page, action, fields, left, factors, sso, from, errors }: { page: PageContext; action: string; fields: [string, string][]; left: string | null; factors: FactorsOf; sso: boolean; from: string | null; errors?: FormError[] | undefined }) {
  const minutes = CONFIRM_WINDOW_MS / 60_000;
  const withPassword = factors.password && (factors.code || !factors.passkey);
  return (
    <Layout title="Confirm it's you" viewer={page.viewer} csrf={page.csrf} errors={errors} scripts={factors.passkey ? PASSKEY_SCRIPTS : undefined}>
      <p class="lead">This action needs a recent sign-in. Confirm it's you to go on; you will not be asked again for {minutes} minutes.</p>
      {left !== null ? <p>The {SECRET_FIELDS[left]} you typed is not carried through this page: after confirming, you type it again.</p> : null}
      <form method="post" action={action} class="panel" data-passkey-auth={factors.passkey ? '/dashboard/account/confirm/passkey-options' : undefined} data-passkey-field="_confirm_passkey">
        <CsrfField token={page.csrf} />
        {fields.map(([name, value]) => (
          <input type="hidden" name={name} value={value} />
        ))}
        {withPassword ? (
          <>
            <Field id="confirm-password" name="_confirm_password" label="Password" type="password" error={errorFor(errors, 'confirm-password')} autocomplete="current-password" required autofocus />
            {factors.code ? (
              <Field id="confirm-code" name="_confirm_code" label="Code" error={errorFor(errors, 'confirm-code')} autocomplete="one-time-code" hint="The 6-digit code from your authenticator app." required />
            ) : null}
            <button type="submit">Confirm</button>
          </>
        ) : null}
        {factors.passkey ? (
          <>
            <input type="hidden" name="_confirm_passkey" value="" />
            <p class="passkey-needs-script">{withPassword ? 'Or use a passkey (needs JavaScript).' : 'Confirm with your passkey. This needs JavaScript in this browser.'}</p>
            <button type="button" class="button secondary" data-passkey-button hidden>
              Use a passkey
            </button>
          </>
        ) : null}
      </form>
      {sso ? (
        <form method="post" action="/dashboard/sso/confirm" class="panel">
          <CsrfField token={page.csrf} />
          {from ? <input type="hidden" name="next" value={from} /> : null}
          <p>{withPassword || factors.passkey ? 'Or sign in again at your identity provider; then send the form again.' : 'Sign in again at your identity provider; then send the form again.'}</p>
          <button type="submit" class={withPassword || factors.passkey ? 'button secondary' : 'button'}>
            Confirm with single sign-on
          </button>
        </form>
      ) : null}
      <p>
        <a href="/dashboard">Cancel</a>
      </p>
    </Layout>
  );
}

/** @simplewebauthn/browser's bundle, from the installed package (its exports name no file, so found beside its entry). */
export async function readWebauthnBundle(): Promise<string> {
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  return readFile(path.join(path.dirname(path.dirname(entry)), 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
}
