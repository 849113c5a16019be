import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errors } from '../../errors.js';
import { TWO_STEP_GRACE_MS } from '../../services/identity/sessions-service.js';
import type { AppDeps } from '../../http/app-deps.js';
import { pageContext, seeOther, sendPage, type PageContext } from '../context.js';
import { FormBody, htmlResponses, pageSchema } from '../schemas.js';
import { CsrfField, Time } from '../views/components.js';
import { Layout } from '../views/layout.js';

const HERE = '/dashboard/settings/security';
const SettingsBody = FormBody({ require_two_step: Type.Optional(Type.Literal('on')) });
const GRACE_DAYS = TWO_STEP_GRACE_MS / 86_400_000;

function SettingsView({ page, requiredAt }: { page: PageContext; requiredAt: number | null }) {
  const { viewer, csrf } = page;
  return (
    <Layout title="Organisation security" viewer={viewer} csrf={csrf}>
      <form method="post" action={HERE} class="panel">
        <CsrfField token={csrf} />
        <div class="field">
          <label class="checkbox">
            <input type="checkbox" name="require_two_step" value="on" checked={requiredAt !== null} aria-describedby="require-hint" /> Require two-step verification for every member
          </label>
          <p class="hint" id="require-hint">
            Members without an authenticator app or a passkey get {GRACE_DAYS} days to set one up (they are mailed the date); after that, the dashboard asks them to set it up
            before anything else. API keys keep working. The "Members" page shows who has it.
          </p>
        </div>
        {requiredAt !== null ? (
          <p class="muted">
            Required since <Time iso={new Date(requiredAt).toISOString()} />.
          </p>
        ) : null}
        <button type="submit">Save security settings</button>
      </form>
      <p>
        <a href="/dashboard/members">Members</a> · <a href="/dashboard/settings/sso">Single sign-on</a> · <a href="/dashboard/account/security">Your own security</a>
      </p>
    </Layout>
  );
}

/** The organisation's security settings (DASHBOARD 11; owners): the two-step requirement. */
export const securitySettingsPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const security = services.accountSecurity;

  app.get('/settings/security', { schema: pageSchema() }, async (request, reply) => {
    const page = pageContext(request);
    if (page.actor.role !== 'owner') throw errors.forbidden('only an owner opens the organisation\'s security settings');
    const { requiredAt } = await security.requirement(page.actor);
    return sendPage(reply, <SettingsView page={page} requiredAt={requiredAt} />);
  });

  app.post('/settings/security', { schema: { hide: true, body: SettingsBody, response: htmlResponses } }, async (request, reply) => {
    const required = request.body.require_two_step === 'on';
    await security.setRequirement(pageContext(request).actor, required);
    return seeOther(reply, HERE, { notice: required ? 'Two-step verification is now required of every member.' : 'Two-step verification is no longer required.' });
  });
};
