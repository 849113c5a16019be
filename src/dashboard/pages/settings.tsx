import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors } from '../../errors.js';
import type { AppDeps } from '../../http/app-deps.js';
import type { Services } from '../../services/index.js';
import { countOf } from '../../lib/text.js';
import { formatDay } from '../../lib/time.js';
import { hostOf } from '../../lib/url-host.js';
import { pageContext, sendPage, type PageContext } from '../context.js';
import { pageSchema } from '../schemas.js';
import { Layout, SETTINGS } from '../views/layout.js';

/** One organisation setting as the Settings page lists it: where it is, and its state in a line. */
interface SettingLine {
  href: string;
  title: string;
  state: string;
}

/**
 * DASHBOARD 1, "Settings": every organisation setting the viewer's role may open, each with its state today.
 * Each line is read through the service that owns the setting, which refuses a role it does not allow; the
 * page only leaves out what the role cannot open, so a refusal here would be a bug, not a hidden line.
 */
async function settingLines(services: Services, page: PageContext): Promise<SettingLine[]> {
  const { actor } = page;
  const owner = actor.role === 'owner';
  const [security, sso, scim, apps, appSettings] = await Promise.all([
    owner ? services.accountSecurity.requirement(actor) : null,
    services.sso.settings(actor),
    owner ? services.scimSettings.view(actor) : null,
    services.connectedApps.listAll(actor),
    services.connectedApps.settings(actor),
  ]);
  const lines: SettingLine[] = [];
  if (security) {
    const twoStep = security.requiredAt === null ? 'Two-step verification is not required' : `Two-step verification required since ${formatDay(security.requiredAt)}`;
    const keys = security.maxKeyLifetimeDays === null ? 'API keys may be created without an expiry' : `API keys expire within ${security.maxKeyLifetimeDays} days`;
    lines.push({ href: '/dashboard/settings/security', title: 'Organisation security', state: `${twoStep}. ${keys}.` });
  }
  lines.push({ href: '/dashboard/settings/sso', title: 'Single sign-on', state: ssoState(sso) });
  if (scim) {
    const tokens = scim.tokens.length;
    lines.push({
      href: '/dashboard/settings/scim',
      title: 'Provisioning',
      state: tokens === 0 ? 'Off: no SCIM token.' : `On: ${countOf(tokens, 'SCIM token')}, ${countOf(scim.provisionedMembers, 'provisioned member')}.`,
    });
  }
  const people = new Set(apps.map((a) => a.userId)).size;
  lines.push({
    href: '/dashboard/settings/apps',
    title: 'Apps',
    state: `${apps.length === 0 ? 'No app connected' : `${countOf(apps.length, 'app')} connected by ${countOf(people, 'person', 'people')}`}. ${appSettings.membersMayConnect ? 'Members may connect apps' : 'Only admins and owners connect apps'}.`,
  });
  const workspace = page.viewer.workspace;
  lines.push({
    href: '/dashboard/billing',
    title: 'Billing',
    state: workspace.state === 'active' ? 'Subscription active.' : workspace.deletionAt === null ? 'The workspace is being deleted.' : `Read-only: the workspace is deleted on ${formatDay(workspace.deletionAt)}.`,
  });
  return lines;
}

function ssoState(view: Awaited<ReturnType<Services['sso']['settings']>>): string {
  const connection = view.connection;
  if (!connection) return 'Not set up: members sign in with a password or a passkey.';
  const verified = view.domains.filter((d) => d.status === 'verified').length;
  const domains = verified === 0 ? 'no verified domain' : countOf(verified, 'verified domain');
  return `${connection.requiredAt === null ? 'Offered' : 'Required'}: connected to ${hostOf(connection.issuer)}, ${domains}.`;
}

function SettingsView({ page, lines }: { page: PageContext; lines: SettingLine[] }) {
  return (
    <Layout title="Settings" viewer={page.viewer} csrf={page.csrf} current={SETTINGS}>
      <p class="lead">How {page.viewer.organizationName} signs in, who may connect apps, and its subscription. Your own profile and sign-in are under Account and Security.</p>
      <ul class="settings-list" aria-label="Organisation settings">
        {lines.map((line) => (
          <li>
            <a href={line.href}>{line.title}</a>
            <span class="hint">{line.state}</span>
          </li>
        ))}
      </ul>
    </Layout>
  );
}

/** `/dashboard/settings` (A): the organisation's settings in one place, linked from the navigation. */
export const settingsPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  app.get('/settings', { schema: pageSchema() }, async (request, reply) => {
    const page = pageContext(request);
    if (page.actor.role !== 'owner' && page.actor.role !== 'admin') throw errors.forbidden('only admins and owners open the organisation settings');
    return sendPage(reply, <SettingsView page={page} lines={await settingLines(services, page)} />);
  });
};
