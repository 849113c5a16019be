import { errors, fieldError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { BLANK_MESSAGE, isBlank } from '../../lib/text.js';
import { toIso, type Clock } from '../../lib/time.js';
import type { ProjectRole, ProjectRow, ProjectStatus, ProjectVisibility } from '../../db/schema.js';
import type { Repositories } from '../../db/repositories/index.js';
import type { Store } from '../../db/store.js';
import type { ProjectListRow } from '../../db/repositories/projects-repo.js';
import { authorize, type Actor } from '../access/actor.js';
import { createdChanges, diffChanges, recordAudit } from '../audit/audit-record.js';
import { recordEvent } from '../events/outbox.js';
import { decodeCursor, pageResult, type PageRequest, type PageResult } from '../shared/pagination.js';
import { requireWritable } from '../access/workspace.js';
import { projectAccess, projectViewer, requireProject, requireRight, requireScope, rightFor, requireWritableUpFront } from '../access/project-access.js';
import type { Action } from '../access/permissions.js';
import type { ResourceKind } from '../../schemas/access.js';
import { namedAssignees, unseeingUsers } from '../access/project-assignees.js';
import type { Project, ProjectListItem } from '../../schemas/projects.js';

export interface CreateProjectInput {
  name: string;
  description?: string | null | undefined;
  status?: 'active' | 'draft' | undefined;
  visibility?: ProjectVisibility | undefined;
}

export interface UpdateProjectInput {
  name?: string | undefined;
  description?: string | null | undefined;
  status?: ProjectStatus | undefined;
  visibility?: ProjectVisibility | undefined;
}

export interface ProjectListFilter {
  status?: ProjectStatus | undefined;
  visibility?: ProjectVisibility | undefined;
}

/** What the doors offer on a project a person may see (DASHBOARD 13): each right decided by project-access. */
export interface ProjectRights {
  read: true;
  /** Change the project, its workflows, runs and tasks. */
  write: boolean;
  /** Change visibility and collaborators; delete the project. */
  manage: boolean;
}

export function toProject(row: ProjectRow): Project {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    status: row.status,
    visibility: row.visibility,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/**
 * A list item: the specification's four fields, which the API's response schema keeps (CONTRACT 3), and the
 * visibility, which the dashboard marks ("Private").
 */
export type ProjectSummary = ProjectListItem & { visibility: ProjectVisibility };

function toListItem(row: ProjectListRow): ProjectSummary {
  return { id: row.id, name: row.name, status: row.status, visibility: row.visibility, created_at: toIso(row.created_at) };
}

/** The event payload of project.created and project.updated. */
function eventData(row: ProjectRow): Record<string, unknown> {
  const p = toProject(row);
  return { project_id: p.id, name: p.name, description: p.description, status: p.status, visibility: p.visibility, created_at: p.created_at, updated_at: p.updated_at };
}

/** The schema counts the length (1 to 255 code points); a name must also be visible (CONTRACT 4). */
function checkName(name: string): void {
  if (isBlank(name)) throw fieldError('name', BLANK_MESSAGE);
}

/** What a call names in its path, through which its project is found. */
export interface ProjectTarget {
  kind: 'project' | 'workflow' | 'run' | 'task';
  id: string;
}

async function projectIdOf(repos: Repositories, orgId: string, target: ProjectTarget): Promise<string | undefined> {
  switch (target.kind) {
    case 'project':
      return target.id;
    case 'workflow':
      return (await repos.workflows.findById(orgId, target.id))?.project_id;
    case 'run':
      return (await repos.runs.findById(orgId, target.id))?.project_id;
    case 'task':
      return (await repos.tasks.findById(orgId, target.id))?.project_id;
  }
}

const PROJECT_FIELDS = ['name', 'description', 'status', 'visibility'] as const;

/** CONTRACT 15: a project goes private only when everyone its open tasks and steps name could still see it. */
async function requireAssigneesSee(repos: Repositories, orgId: string, projectId: string): Promise<void> {
  const unseeing = await unseeingUsers(repos, orgId, projectId, await namedAssignees(repos, orgId, projectId));
  if (unseeing.length === 0) return;
  const names = unseeing.map((u) => u.email).sort();
  throw errors.conflict(
    `open tasks or workflow steps of this project are assigned to ${names.join(', ')}, who could not see it once private: add ${names.length === 1 ? 'them' : 'each'} as a collaborator or reassign first`,
  );
}

const projectTarget = (row: ProjectRow) => ({ type: 'project', id: row.id, label: row.name });

const emptyToNull = (value: string | null | undefined) => (value === '' || value === undefined ? null : value);

export interface ProjectsServiceDeps {
  store: Store;
  clock: Clock;
}

export function createProjectsService({ store, clock }: ProjectsServiceDeps) {
  return {
    /** A page of the projects the actor may see (CONTRACT 15: a private project is listed for its collaborators only). */
    async list(actor: Actor, page: PageRequest & ProjectListFilter): Promise<PageResult<ProjectSummary>> {
      requireScope(actor, 'projects', 'read');
      const before = decodeCursor(page.cursor);
      const rows = await store.repos.projects.list(actor.orgId, page.limit, before, {
        status: page.status ?? null,
        visibility: page.visibility ?? null,
        viewer: projectViewer(actor),
      });
      return pageResult(rows, toListItem);
    },

    async get(actor: Actor, projectId: string): Promise<Project> {
      const { project } = await requireProject(store.repos, actor, projectId, 'projects', 'read');
      return toProject(project);
    },

    /** The project and what the actor may do on it, for a door to decide which controls to offer. */
    async withRights(actor: Actor, projectId: string): Promise<{ project: Project; rights: ProjectRights; projectRole: ProjectRole | null }> {
      const access = await requireProject(store.repos, actor, projectId, 'projects', 'read');
      const rights: ProjectRights = { read: true, write: access.can('write'), manage: access.can('manage') };
      return { project: toProject(access.project), rights, projectRole: access.projectRole };
    },

    /**
     * Whether a person whose organisation role does not allow a change on a project's resources may make it
     * all the same through their project role: the API asks before it reads the body, so that a refusal is
     * 403 ahead of any 400 (CONTRACT 1's order). `hidden`: the project (or the thing under it) does not exist
     * for them, which the call itself will answer with 404 after validation.
     */
    async precheck(actor: Actor, target: ProjectTarget, resource: ResourceKind, action: Action): Promise<'allowed' | 'forbidden' | 'hidden'> {
      const projectId = await projectIdOf(store.repos, actor.orgId, target);
      const access = projectId === undefined ? undefined : await projectAccess(store.repos, actor, projectId);
      if (!access) return 'hidden';
      return access.can(rightFor(resource, action)) ? 'allowed' : 'forbidden';
    },

    /**
     * Throws unless the actor may make changes of this kind on the project: 404 when it is hidden from them,
     * 403 (in the words every door shows) when their rights fall short. For doors that check before reading a form.
     */
    async requireChange(actor: Actor, projectId: string, right: 'write' | 'manage'): Promise<void> {
      const access = await requireProject(store.repos, actor, projectId, 'projects', 'read');
      requireRight(actor, access, 'projects', right === 'manage' ? 'delete' : 'update', right);
    },

    /** Names of the projects the actor may see, newest first, for pickers; bounded. */
    async names(actor: Actor, limit = 500): Promise<{ id: string; name: string; visibility: ProjectVisibility }[]> {
      requireScope(actor, 'projects', 'read');
      return store.repos.projects.visibleNames(actor.orgId, projectViewer(actor), limit);
    },

    async create(actor: Actor, input: CreateProjectInput): Promise<Project> {
      authorize(actor, 'projects', 'create');
      await requireWritable(store.repos, actor);
      checkName(input.name);
      const { orgId } = actor;
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        const inserted = await repos.projects.insert({
          id: newId('proj'),
          org_id: orgId,
          name: input.name,
          description: emptyToNull(input.description),
          status: input.status ?? 'active',
          visibility: input.visibility ?? 'organization',
          created_at: now,
          updated_at: now,
        });
        // The person who creates a project manages it (CONTRACT 15); the CLI and the jobs are nobody's.
        if (actor.type === 'user') {
          await repos.collaborators.insert({ org_id: orgId, project_id: inserted.id, user_id: actor.userId, role: 'manager', created_at: now, updated_at: now });
        }
        await recordEvent(repos, { orgId, type: 'project.created', data: eventData(inserted), occurredAt: now });
        await recordAudit(repos, actor, {
          action: 'project.created',
          target: projectTarget(inserted),
          changes: createdChanges({ name: inserted.name, description: inserted.description, status: inserted.status, visibility: inserted.visibility }),
          at: now,
        });
        return inserted;
      });
      return toProject(row);
    },

    async update(actor: Actor, projectId: string, input: UpdateProjectInput): Promise<Project> {
      requireScope(actor, 'projects', 'update');
      await requireWritableUpFront(store.repos, actor);
      if (input.name !== undefined) checkName(input.name);
      const { orgId } = actor;
      const now = clock.now();
      const result = await store.transaction(async (repos) => {
        const access = await requireProject(repos, actor, projectId, 'projects', 'update');
        const current = access.project;
        const next = {
          name: input.name ?? current.name,
          description: input.description === undefined ? current.description : emptyToNull(input.description),
          status: input.status ?? current.status,
          visibility: input.visibility ?? current.visibility,
        };
        if (next.visibility !== current.visibility) {
          requireRight(actor, access, 'projects', 'update', 'manage');
          if (next.visibility === 'private') await requireAssigneesSee(repos, orgId, projectId);
        }
        const previous: Record<string, unknown> = {};
        for (const field of PROJECT_FIELDS) {
          if (next[field] !== current[field]) previous[field] = current[field];
        }
        // Nothing changes: no write, no event, updated_at stays.
        if (Object.keys(previous).length === 0) return { row: current, changed: false };
        const updated = await repos.projects.update(orgId, projectId, { ...next, updated_at: now });
        if (!updated) throw errors.notFound('project');
        await recordEvent(repos, {
          orgId,
          type: 'project.updated',
          data: { ...eventData(updated), previous },
          occurredAt: now,
        });
        await recordAudit(repos, actor, {
          action: 'project.updated',
          target: projectTarget(updated),
          changes: diffChanges(current, next, PROJECT_FIELDS),
          at: now,
        });
        return { row: updated, changed: true };
      });
      return toProject(result.row);
    },

    async remove(actor: Actor, projectId: string): Promise<void> {
      requireScope(actor, 'projects', 'delete');
      await requireWritableUpFront(store.repos, actor);
      const { orgId } = actor;
      const now = clock.now();
      await store.transaction(async (repos) => {
        const { project: current } = await requireProject(repos, actor, projectId, 'projects', 'delete');
        await repos.projects.deleteWithChildren(orgId, projectId);
        await recordEvent(repos, {
          orgId,
          type: 'project.deleted',
          data: { project_id: current.id, name: current.name, status: current.status },
          occurredAt: now,
        });
        // Once the row is gone nothing says the project was private: its events (this one too) stay the admins'.
        if (current.visibility === 'private') await repos.events.restrictProject(orgId, projectId);
        await recordAudit(repos, actor, { action: 'project.deleted', target: projectTarget(current), at: now });
      });
    },
  };
}

export type ProjectsService = ReturnType<typeof createProjectsService>;
