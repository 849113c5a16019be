import { cliActor } from '../../services/access/actor.js';
import type { OrganizationLifecycle } from '../../services/lifecycle/lifecycle-service.js';
import { type CommandGroup, type PositionalSpec, required, UsageError } from '../command.js';
import { formatFields, formatTable } from '../output.js';
import type { SsoSettingsView } from '../../services/identity/sso-service.js';
import { withContainer } from '../runtime.js';
import { toIso } from '../../lib/time.js';

const ORG_ID: readonly PositionalSpec[] = [{ name: 'ORG', description: 'organisation id (org_...)' }];

const STATE_WORDS: Record<OrganizationLifecycle['state'], string> = {
  active: 'active',
  read_only: 'read-only (subscription cancelled)',
  deleting: 'being deleted',
};

/** `org show` and the lines the state changes print: state, dates and who bills. */
function lifecycleText(org: OrganizationLifecycle): string {
  return formatFields([
    ['Organization', `${org.id}  ${org.name}`],
    ['State', STATE_WORDS[org.state]],
    ['Billing', org.billing === 'stripe' ? 'Stripe' : 'manual (owner and CLI)'],
    ['Created', org.created_at],
    ['Cancelled', org.cancelled_at],
    ['Deletion', org.deletion_at],
  ]);
}

const SSO_ACTIONS = ['show', 'require', 'unrequire'] as const;
const SCIM_TOKEN_ACTIONS = ['create', 'list', 'revoke'] as const;
const DOMAIN_ACTIONS = ['list', 'verify'] as const;

function action<T extends string>(given: string, allowed: readonly T[], path: string): T {
  if (!(allowed as readonly string[]).includes(given)) throw new UsageError(`ACTION must be one of ${allowed.join(', ')}, got "${given}"`, path);
  return given as T;
}

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : toIso(ms));

/** `org sso show`: the connection as the settings page shows it (never the secret). */
function ssoData(view: SsoSettingsView) {
  const c = view.connection;
  return {
    redirect_url: view.redirectUrl,
    connection: c
      ? { issuer: c.issuer, client_id: c.clientId, create_members: c.jit, default_role: c.defaultRole, required_at: iso(c.requiredAt), tested_at: iso(c.testedAt), test: c.test }
      : null,
    domains: view.domains.map(domainData),
    require_blocked_by: view.requireBlockedBy,
  };
}

function domainData(d: SsoSettingsView['domains'][number]) {
  return { domain: d.domain, status: d.status, record_name: d.recordName, record_value: d.recordValue, verified_at: iso(d.verifiedAt), missing_since: iso(d.missingSince) };
}

export const orgGroup: CommandGroup = {
  name: 'org',
  summary: 'organisations',
  commands: [
    {
      name: 'create',
      summary: 'create an organisation with an active owner and a full-access API key',
      details: 'The API key is shown once; store it now. setup_url is a single-use link (72 hours) for the owner to choose a dashboard password.',
      options: {
        name: { type: 'string', value: 'NAME', description: 'organisation name (1 to 255 characters, not blank)', required: true },
        'owner-email': { type: 'string', value: 'EMAIL', description: "the owner's e-mail address", required: true },
        'owner-name': { type: 'string', value: 'NAME', description: "the owner's display name" },
      },
      async run(input) {
        const created = await withContainer(input, async (c) => {
          const org = await c.services.admin.createOrganization({
            name: required(input, 'name'),
            ownerEmail: required(input, 'owner-email'),
            ownerName: input.options['owner-name'],
          });
          // The owner has no password yet: a single-use 72-hour link to choose one on the dashboard.
          const setup = await c.services.accounts.issuePasswordLink(cliActor(org.organization.id), org.owner.id, 'setup');
          return { ...org, setup_url: setup.url };
        });
        const { organization, owner, api_key, setup_url } = created;
        return {
          data: created,
          text: formatFields([
            ['Organization', `${organization.id}  ${organization.name}`],
            ['Owner', `${owner.id}  ${owner.email} (${owner.role})`],
            ['API key id', api_key.id],
            ['API key scope', api_key.scope],
            ['API key', `${api_key.key}  (shown once: store it now)`],
            ['Password setup', `${setup_url}  (single use, valid 72 hours)`],
          ]),
        };
      },
    },
    {
      name: 'show',
      summary: "an organisation's subscription state and deletion date",
      positionals: ORG_ID,
      async run(input) {
        const org = await withContainer(input, (c) => c.services.lifecycle.show(cliActor(input.args[0]!)));
        return { data: org, text: lifecycleText(org) };
      },
    },
    {
      name: 'cancel',
      summary: 'cancel the subscription: the workspace becomes read-only and is deleted in 30 days',
      details: 'The owners are e-mailed. Until the deletion date, "org resume" (or an owner on the Billing page) undoes it.',
      positionals: ORG_ID,
      async run(input) {
        const { organization: org } = await withContainer(input, (c) => c.services.lifecycle.cancel(cliActor(input.args[0]!)));
        return { data: org, text: `Cancelled the subscription of ${org.id} (${org.name}): read-only now, deleted on ${org.deletion_at} unless resumed.` };
      },
    },
    {
      name: 'resume',
      summary: 'resume a cancelled subscription within its 30 days: the workspace is active again',
      positionals: ORG_ID,
      async run(input) {
        const { organization: org } = await withContainer(input, (c) => c.services.lifecycle.resume(cliActor(input.args[0]!)));
        return { data: org, text: `Resumed the subscription of ${org.id} (${org.name}): active again; nothing will be deleted.` };
      },
    },
      {
      name: 'sso',
      summary: "an organisation's single sign-on: show it, require it, or stop requiring it",
      details:
        'ACTION is show, require or unrequire. "require" needs a saved connection, a verified domain and a successful test sign-in (from the dashboard); members in verified domains then sign in only with single sign-on. Their API keys keep working unless --revoke-keys is given. Audited (source cli).',
      positionals: [
        { name: 'ACTION', description: 'show, require or unrequire' },
        { name: 'ORG', description: 'organisation id (org_...)' },
      ],
      options: {
        'revoke-keys': { type: 'boolean', description: 'with require: also revoke the API keys of the members it binds (owners keep theirs)' },
      },
      async run(input) {
        const verb = action(input.args[0]!, SSO_ACTIONS, 'org sso');
        const actor = cliActor(input.args[1]!);
        let revokedKeys = 0;
        const view = await withContainer(input, async (c) => {
          if (verb !== 'show') revokedKeys = (await c.services.sso.setRequired(actor, verb === 'require', { revokeKeys: input.flags['revoke-keys'] === true })).revokedKeys;
          return c.services.sso.settings(actor);
        });
        const data = { ...ssoData(view), ...(verb === 'require' ? { revoked_keys: revokedKeys } : {}) };
        const conn = data.connection;
        return {
          data,
          text: formatFields([
            ['Issuer', conn?.issuer ?? '(no connection)'],
            ['Client ID', conn?.client_id],
            ['Redirect URL', data.redirect_url],
            ['Create members', conn ? (conn.create_members ? `yes, as ${conn.default_role}` : 'no (invitation first)') : null],
            ['Tested', conn?.tested_at],
            ['Required', conn?.required_at ?? (data.require_blocked_by ? `no (${data.require_blocked_by})` : 'no')],
            ['Verified domains', data.domains.filter((d) => d.status !== 'pending').map((d) => d.domain).join(', ') || null],
            ...(verb === 'require' ? [['Keys revoked', String(revokedKeys)] as [string, string]] : []),
          ]),
        };
      },
    },
    {
      name: 'scim-token',
      summary: "an organisation's SCIM tokens (provisioning): create one, list them, or revoke one",
      details:
        'ACTION is create, list or revoke. create needs --name and prints the token once (wss_...); paste it with the base URL into the identity provider. Two tokens may be valid at once, to rotate: create the new one, switch the provider, revoke the old one (--id). Audited (source cli).',
      positionals: [
        { name: 'ACTION', description: 'create, list or revoke' },
        { name: 'ORG', description: 'organisation id (org_...)' },
      ],
      options: {
        name: { type: 'string', value: 'NAME', description: 'what the token is for, e.g. Okta (create)' },
        id: { type: 'string', value: 'TOKEN_ID', description: 'the token to revoke (sct_...)' },
      },
      async run(input) {
        const verb = action(input.args[0]!, SCIM_TOKEN_ACTIONS, 'org scim-token');
        const actor = cliActor(input.args[1]!);
        if (verb === 'create') {
          const name = input.options.name;
          if (!name) throw new UsageError('create needs --name NAME', 'org scim-token');
          const { created, baseUrl } = await withContainer(input, async (c) => ({ created: await c.services.scimSettings.createToken(actor, name), baseUrl: c.services.scimSettings.baseUrl }));
          return {
            data: { id: created.id, name: created.name, token: created.token, base_url: baseUrl },
            text: formatFields([
              ['SCIM token id', created.id],
              ['Name', created.name],
              ['Base URL', baseUrl],
              ['SCIM token', `${created.token}  (shown once: store it now)`],
            ]),
          };
        }
        if (verb === 'revoke') {
          const id = input.options.id;
          if (!id) throw new UsageError('revoke needs --id TOKEN_ID', 'org scim-token');
          const revoked = await withContainer(input, (c) => c.services.scimSettings.revokeToken(actor, id));
          return { data: { id, name: revoked.name, revoked: true }, text: `Revoked SCIM token ${id} (${revoked.name}): refused from the next request on.` };
        }
        const tokens = (await withContainer(input, (c) => c.services.scimSettings.listTokens(actor))).map((t) => ({
          id: t.id,
          name: t.name,
          prefix: t.prefix,
          created_at: toIso(t.createdAt),
          last_used_at: iso(t.lastUsedAt),
        }));
        return { data: { data: tokens }, text: formatTable(tokens, ['id', 'name', 'prefix', 'created_at', 'last_used_at']) };
      },
    },
    {
      name: 'domain',
      summary: "an organisation's single sign-on domains: list them, or verify one by its DNS TXT record now",
      details: 'ACTION is list or verify. verify looks up _workspace-verification.DOMAIN (resolvers: DNS_SERVERS, default the system\'s) and needs --domain.',
      positionals: [
        { name: 'ACTION', description: 'list or verify' },
        { name: 'ORG', description: 'organisation id (org_...)' },
      ],
      options: {
        domain: { type: 'string', value: 'DOMAIN', description: 'the domain to verify (verify)' },
      },
      async run(input) {
        const verb = action(input.args[0]!, DOMAIN_ACTIONS, 'org domain');
        const actor = cliActor(input.args[1]!);
        if (verb === 'verify') {
          const domain = input.options.domain;
          if (!domain) throw new UsageError('verify needs --domain DOMAIN', 'org domain');
          const verified = domainData(await withContainer(input, (c) => c.services.sso.verifyDomain(actor, domain)));
          return { data: verified, text: formatFields([['Domain', verified.domain], ['Status', verified.status], ['Verified', verified.verified_at]]) };
        }
        const domains = (await withContainer(input, (c) => c.services.sso.settings(actor))).domains.map(domainData);
        return { data: { data: domains }, text: formatTable(domains, ['domain', 'status', 'record_name', 'record_value', 'verified_at']) };
      },
    },
  ],
};
