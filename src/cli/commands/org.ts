import { cliActor } from '../../services/actor.js';
import type { OrganizationLifecycle } from '../../services/lifecycle-service.js';
import type { CommandGroup, PositionalSpec } from '../command.js';
import { required } from '../command.js';
import { formatFields } from '../output.js';
import { withContainer } from '../runtime.js';

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

export const orgGroup: CommandGroup = {
  name: 'org',
  summary: 'organisations',
  commands: [
    {
      name: 'create',
      summary: 'create an organisation with an active owner and a full-access API key',
      details: 'The API key is shown once; store it now. setup_url is a single-use link (72 hours) for the owner to choose a dashboard password.',
      options: {
        name: { type: 'string', value: 'NAME', description: 'organisation name (1 to 255 characters)', required: true },
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
  ],
};
