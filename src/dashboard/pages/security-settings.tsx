import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errors } from '../../errors.js';
import { TWO_STEP_GRACE_MS } from '../../services/identity/sessions-service.js';
import { KEY_LIFETIME_LIMITS } from '../../services/identity/api-keys-service.js';
import type { AppDeps } from '../../http/app-deps.js';
import { pageContext, seeOther, sendPage, type PageContext } from '../context.js';
import { FormBody, htmlResponses, pageSchema } from '../schemas.js';
import { CsrfField, Time } from '../views/components.js';
import { Layout, SETTINGS } from '../views/layout.js';

const HERE = '/dashboard/settings/security';
/** "Maximum API key lifetime" (DASHBOARD 14): none, or one of the service's limits. */
const LIFETIME_OPTIONS = [{ value: 'none', label: 'None', days: null }, ...KEY_LIFETIME_LIMITS.map((days) => ({ value: String(days), label: `${days} days`, days }))];
const SettingsBody = FormBody({
  require_two_step: Type.Optional(Type.Literal('on')),
  max_key_lifetime: Type.Optional(Type.Union(LIFETIME_OPTIONS.map((o) => Type.Literal(o.value)))),
});
const GRACE_DAYS = TWO_STEP_GRACE_MS / 86_400_000;

function SettingsView({ page, requiredAt, maxKeyLifetimeDays }: { page: PageContext; requiredAt: number | null; maxKeyLifetimeDays: number | null }) {
  const { viewer, csrf } = page;
  return (
    <Layout title="Organisation security" viewer={viewer} csrf={csrf} current={SETTINGS}>
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
        <div class="field">
          <label for="max_key_lifetime">Maximum API key lifetime</label>
          <p class="hint" id="lifetime-hint">
            New API keys must expire within this many days; keys without an expiry, or with a later one, are refused when created. Keys that exist keep their expiry, and their
            owners are mailed 7 days before it.
          </p>
          <select id="max_key_lifetime" name="max_key_lifetime" aria-describedby="lifetime-hint">
            {LIFETIME_OPTIONS.map((o) => (
              <option value={o.value} selected={o.days === maxKeyLifetimeDays}>
                {o.label}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Save security settings</button>
      </form>
      <p>
        <a href={SETTINGS}>All settings</a> · <a href="/dashboard/account/security">Your own security</a>
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
    const { requiredAt, maxKeyLifetimeDays } = await security.requirement(page.actor);
    return sendPage(reply, <SettingsView page={page} requiredAt={requiredAt} maxKeyLifetimeDays={maxKeyLifetimeDays} />);
  });

  app.post('/settings/security', { schema: { hide: true, body: SettingsBody, response: htmlResponses } }, async (request, reply) => {
    const actor = pageContext(request).actor;
    const required = request.body.require_two_step === 'on';
    const before = await security.requirement(actor);
    await security.setRequirement(actor, required);
    // Left out (a form from before this field existed): the lifetime stays as it is.
    const lifetime = request.body.max_key_lifetime === undefined ? before.maxKeyLifetimeDays : (LIFETIME_OPTIONS.find((o) => o.value === request.body.max_key_lifetime)?.days ?? null);
    await security.setMaxKeyLifetime(actor, lifetime);
    const notices = [
      (before.requiredAt !== null) !== required ? (required ? 'Two-step verification is now required of every member.' : 'Two-step verification is no longer required.') : null,
      before.maxKeyLifetimeDays !== lifetime ? (lifetime === null ? 'API keys may now be created without an expiry.' : `New API keys now expire within ${lifetime} days.`) : null,
    ].filter((n) => n !== null);
    return seeOther(reply, HERE, { notice: notices.length > 0 ? notices.join(' ') : 'Nothing changed.' });
  });
};
