import { cliActor } from '../../services/access/actor.js';
import { ROLES } from '../../schemas/access.js';
import { ORG_OPTION, required, type CommandGroup } from '../command.js';
import { formatFields } from '../output.js';
import { withContainer } from '../runtime.js';

export const userGroup: CommandGroup = {
  name: 'user',
  summary: 'members of an organisation',
  commands: [
    {
      name: 'add',
      summary: 'add an active member directly (no invitation e-mail)',
      details: 'An invited user with the same e-mail becomes active with the given role; an active one is a conflict.',
      options: {
        org: ORG_OPTION,
        email: { type: 'string', value: 'EMAIL', description: 'e-mail address', required: true },
        role: { type: 'string', value: 'ROLE', description: 'role', required: true, choices: ROLES },
        name: { type: 'string', value: 'NAME', description: 'display name' },
      },
      async run(input) {
        const user = await withContainer(input, (c) =>
          c.services.admin.addUser({
            orgId: required(input, 'org'),
            email: required(input, 'email'),
            role: required(input, 'role'),
            name: input.options.name,
          }),
        );
        return {
          data: user,
          text: formatFields([
            ['User', user.id],
            ['E-mail', user.email],
            ['Name', user.name],
            ['Role', user.role],
            ['Status', user.status],
            ['Created', user.created_at],
          ]),
        };
      },
    },
    {
      name: 'password-link',
      summary: 'a single-use link (72 hours) for an active user to choose a dashboard password',
      details: 'Any older unused password link of the user stops working. Invited users accept their invitation instead.',
      options: {
        user: { type: 'string', value: 'USER', description: 'user id (user_...)', required: true },
      },
      async run(input) {
        // An operator names users by their global id: any organisation.
        const link = await withContainer(input, (c) => c.services.accounts.issuePasswordLink(cliActor(''), required(input, 'user'), 'setup'));
        return {
          data: link,
          text: formatFields([
            ['Link', link.url],
            ['Expires', `${link.expires_at}  (single use)`],
          ]),
        };
      },
    },
    {
      name: 'reset-mfa',
      summary: "remove a user's authenticator app, recovery codes and passkeys, and end their sessions",
      details: "The operator's break glass for a member who lost every second factor. Audited (source cli); the user and the organisation's owners are mailed.",
      options: {
        user: { type: 'string', value: 'USER', description: 'user id (user_...)', required: true },
      },
      async run(input) {
        const result = await withContainer(input, (c) => c.services.accountSecurity.resetSecondFactors(cliActor(''), required(input, 'user')));
        return {
          data: result,
          text: formatFields([
            ['User', result.user_id],
            ['Passkeys removed', String(result.passkeys_removed)],
            ['Sessions ended', String(result.sessions_ended)],
          ]),
        };
      },
    },
  ],
};
