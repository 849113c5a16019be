import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../http/app-deps.js';
import { pageContext, pageRefusal, seeOther, sendPage, type PageContext } from '../context.js';
import { formErrors } from '../form-validation.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { CsrfField, errorFor, Field, type FormError } from '../views/components.js';
import { Layout } from '../views/layout.js';
import { NewPasswordField } from './auth.js';
import { ConnectedAppsTable } from './apps.js';
import type { ConnectedApp } from '../../services/apps/connected-apps-service.js';

const HERE = '/dashboard/account';

const NameBody = FormBody({ name: FormText(1024) });
const PasswordBody = FormBody({ current_password: FormText(4096), new_password: FormText(4096) });

function AccountView({ page, apps, name, errors }: { page: PageContext; apps: readonly ConnectedApp[]; name?: string | null | undefined; errors?: FormError[] }) {
  const { viewer, csrf } = page;
  return (
    <Layout title="Account" viewer={viewer} csrf={csrf} current={HERE} errors={errors}>
      <section aria-labelledby="profile-title" class="panel">
        <h2 id="profile-title">Profile</h2>
        <p>
          Signed in as <strong>{viewer.email}</strong> in {viewer.organizationName} ({viewer.role}).
        </p>
        <form method="post" action={`${HERE}/name`}>
          <CsrfField token={csrf} />
          <Field id="name" label="Name" value={name ?? viewer.name} error={errorFor(errors, 'name')} autocomplete="name" maxLength={255} required />
          <button type="submit">Save name</button>
        </form>
      </section>
      <section aria-labelledby="password-title" class="panel">
        <h2 id="password-title">Password</h2>
        <form method="post" action={`${HERE}/password`}>
          <CsrfField token={csrf} />
          <Field id="current_password" label="Current password" type="password" error={errorFor(errors, 'current_password')} autocomplete="current-password" required />
          <NewPasswordField id="new_password" label="New password" errors={errors} hint="8 to 1,024 characters. Your other sessions are signed out; this one stays." />
          <button type="submit" class="secondary">
            Change password
          </button>
        </form>
        <p>
          Two-step verification, passkeys and where you are signed in: <a href="/dashboard/account/security">Security</a>.
        </p>
      </section>
      <section aria-labelledby="apps-title" class="panel">
        <h2 id="apps-title">Connected apps</h2>
        <p class="hint">Apps and AI agents you allowed to act for you in {viewer.organizationName}. Revoking one ends its access at once.</p>
        <ConnectedAppsTable apps={apps} revokeBase={`${HERE}/apps`} />
        {viewer.role === 'owner' || viewer.role === 'admin' ? (
          <p>
            <a href="/dashboard/settings/apps">Every app connected in {viewer.organizationName}</a>
          </p>
        ) : null}
      </section>
    </Layout>
  );
}

/** "Account" (DASHBOARD 3): any member changes their own name and password; the accounts service decides. */
export const accountPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const accounts = services.accounts;

  app.get('/account', { schema: pageSchema() }, async (request, reply) => {
    const page = pageContext(request);
    return sendPage(reply, <AccountView page={page} apps={await services.connectedApps.listMine(page.actor)} />);
  });

  app.post('/account/name', { schema: { hide: true, body: NameBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const name = request.body.name ?? '';
    try {
      await accounts.changeName(page.actor, name);
      return seeOther(reply, HERE, { notice: `Your name was saved as "${name}".` });
    } catch (error) {
      const refusal = pageRefusal(reply, error);
      return sendPage(reply, <AccountView page={page} apps={await services.connectedApps.listMine(page.actor)} name={name} errors={formErrors(refusal, { name: 'Name' })} />, refusal.status);
    }
  });

  app.post('/account/password', { schema: { hide: true, body: PasswordBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const { current_password: current = '', new_password: next = '' } = request.body;
    try {
      await accounts.changePassword(page.actor, current, next);
      return seeOther(reply, HERE, { notice: 'Your password was changed. Your other sessions were signed out.' });
    } catch (error) {
      const refusal = pageRefusal(reply, error);
      const errors = formErrors(refusal, { current_password: 'Current password', new_password: 'New password' });
      return sendPage(reply, <AccountView page={page} apps={await services.connectedApps.listMine(page.actor)} errors={errors} />, refusal.status);
    }
  });
};
