import { cliActor } from '../../services/actor.js';
import type { CommandGroup } from '../command.js';
import { required } from '../command.js';
import { formatFields } from '../output.js';
import { withContainer } from '../runtime.js';

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
  ],
};
