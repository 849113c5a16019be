import { cliActor } from '../../services/access/actor.js';
import type { Project } from '../../schemas/projects.js';
import { PROJECT_ROLES, PROJECT_VISIBILITIES } from '../../schemas/projects.js';
import type { ProjectRole, ProjectStatus, ProjectVisibility } from '../../db/schema.js';
import { AS_OPTION, CURSOR_OPTION, LIMIT_OPTION, ORG_OPTION, pageResult, required, UsageError, type CommandGroup, type CommandResult } from '../command.js';
import { formatFields, formatTable } from '../output.js';
import { actingAs as actor, withContainer } from '../runtime.js';

const PROJECT_ID = [{ name: 'PROJECT_ID', description: 'the project id (proj_...)' }] as const;

function shown(project: Project): CommandResult {
  return {
    data: project,
    text: formatFields([
      ['Project', project.id],
      ['Name', project.name],
      ['Status', project.status],
      ['Visibility', project.visibility],
      ['Description', project.description],
      ['Updated', project.updated_at],
    ]),
  };
}

export const projectGroup: CommandGroup = {
  name: 'project',
  summary: 'projects: list, show, update visibility, and their collaborators',
  commands: [
    {
      name: 'list',
      summary: "list an organisation's projects, newest first (as GET /v1/projects)",
      options: {
        org: ORG_OPTION,
        as: AS_OPTION,
        status: { type: 'string', value: 'STATUS', description: 'only projects in this state', choices: ['active', 'archived', 'draft'] },
        visibility: { type: 'string', value: 'VISIBILITY', description: 'only projects with this visibility', choices: [...PROJECT_VISIBILITIES] },
        limit: LIMIT_OPTION,
        cursor: CURSOR_OPTION,
      },
      async run(input) {
        const page = await withContainer(input, async (c) =>
          c.services.projects.list(await actor(c, input), {
            limit: Number(input.options.limit ?? 20),
            cursor: input.options.cursor,
            status: input.options.status as ProjectStatus | undefined,
            visibility: input.options.visibility as ProjectVisibility | undefined,
          }),
        );
        return pageResult(page, formatTable(page.items, ['id', 'name', 'status', 'visibility', 'created_at']));
      },
    },
    {
      name: 'show',
      summary: 'show one project (as GET /v1/projects/:id)',
      options: { org: ORG_OPTION, as: AS_OPTION },
      positionals: PROJECT_ID,
      async run(input) {
        return shown(await withContainer(input, async (c) => c.services.projects.get(await actor(c, input), input.args[0]!)));
      },
    },
    {
      name: 'update',
      summary: "change a project's name, status or visibility (as PUT /v1/projects/:id; emits project.updated)",
      details: 'Going private is refused (409) while open tasks or workflow steps name someone who could not see it; the message names them.',
      options: {
        org: ORG_OPTION,
        name: { type: 'string', value: 'NAME', description: 'the new name' },
        status: { type: 'string', value: 'STATUS', description: 'the new status', choices: ['active', 'archived', 'draft'] },
        visibility: { type: 'string', value: 'VISIBILITY', description: 'organization (every member) or private (collaborators, admins, owners)', choices: [...PROJECT_VISIBILITIES] },
      },
      positionals: PROJECT_ID,
      async run(input) {
        const { name, status, visibility } = input.options;
        if (name === undefined && status === undefined && visibility === undefined) throw new UsageError('give --name, --status or --visibility', 'project update');
        const project = await withContainer(input, (c) =>
          c.services.projects.update(cliActor(required(input, 'org')), input.args[0]!, {
            name,
            status: status as ProjectStatus | undefined,
            visibility: visibility as ProjectVisibility | undefined,
          }),
        );
        return shown(project);
      },
    },
    {
      name: 'collaborators',
      summary: "a project's collaborators: list, add (or change the role of) and remove",
      details: 'ACTION is list, add or remove. add needs --user and --role; remove needs --user. Removing someone from a private project unassigns their open tasks there.',
      options: {
        org: ORG_OPTION,
        as: AS_OPTION,
        user: { type: 'string', value: 'USER', description: 'the member (user_...)' },
        role: { type: 'string', value: 'ROLE', description: 'project role', choices: [...PROJECT_ROLES] },
        limit: LIMIT_OPTION,
        cursor: CURSOR_OPTION,
      },
      positionals: [{ name: 'ACTION', description: 'list, add or remove' }, ...PROJECT_ID],
      async run(input) {
        const [action, projectId] = input.args as [string, string];
        const path = 'project collaborators';
        if (action === 'list') {
          const page = await withContainer(input, async (c) =>
            c.services.collaborators.list(await actor(c, input), projectId, { limit: Number(input.options.limit ?? 20), cursor: input.options.cursor }),
          );
          const rows = page.items.map((c) => ({ user_id: c.user.id, email: c.user.email, name: c.user.name, role: c.role, created_at: c.created_at }));
          return pageResult(page, formatTable(rows, ['user_id', 'email', 'name', 'role', 'created_at']));
        }
        if (action !== 'add' && action !== 'remove') throw new UsageError(`ACTION must be list, add or remove, got "${action}"`, path);
        const user = input.options.user;
        if (user === undefined) throw new UsageError(`--user is required to ${action} a collaborator`, path);
        if (action === 'add') {
          const role = input.options.role as ProjectRole | undefined;
          if (role === undefined) throw new UsageError('--role is required to add a collaborator', path);
          const { collaborator, created } = await withContainer(input, async (c) => c.services.collaborators.put(await actor(c, input), projectId, user, role));
          return { data: collaborator, text: `${collaborator.user.email} ${created ? 'added as' : 'is'} ${collaborator.role} on ${projectId}` };
        }
        await withContainer(input, async (c) => c.services.collaborators.remove(await actor(c, input), projectId, user));
        return { data: { removed: true, project_id: projectId, user_id: user }, text: `${user} removed from ${projectId}` };
      },
    },
  ],
};
