import { errors, fieldError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { BLANK_MESSAGE, isBlank } from '../../lib/text.js';
import { toIso, type Clock } from '../../lib/time.js';
import type { ProjectRow, ProjectStatus } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import type { ProjectListRow } from '../../db/repositories/projects-repo.js';
import { authorize, type Actor } from '../access/actor.js';
import { createdChanges, diffChanges, recordAudit } from '../audit/audit-record.js';
import { recordEvent } from '../events/outbox.js';
import { decodeCursor, pageResult, type PageRequest, type PageResult } from '../shared/pagination.js';
import { requireWritable } from '../access/workspace.js';
import type { Project, ProjectListItem } from '../../schemas/projects.js';

export interface CreateProjectInput {
  name: string;
  description?: string | null | undefined;
  status?: 'active' | 'draft' | undefined;
}

export interface UpdateProjectInput {
  name?: string | undefined;
  description?: string | null | undefined;
  status?: ProjectStatus | undefined;
}

export function toProject(row: ProjectRow): Project {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    status: row.status,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

function toListItem(row: ProjectListRow): ProjectListItem {
  return { id: row.id, name: row.name, status: row.status, created_at: toIso(row.created_at) };
}

/** The event payload of project.created and project.updated. */
function eventData(row: ProjectRow): Record<string, unknown> {
  const p = toProject(row);
  return { project_id: p.id, name: p.name, description: p.description, status: p.status, created_at: p.created_at, updated_at: p.updated_at };
}

/** The schema counts the length (1 to 255 code points); a name must also be visible (CONTRACT 4). */
function checkName(name: string): void {
  if (isBlank(name)) throw fieldError('name', BLANK_MESSAGE);
}

const projectTarget = (row: ProjectRow) => ({ type: 'project', id: row.id, label: row.name });

const emptyToNull = (value: string | null | undefined) => (value === '' || value === undefined ? null : value);

export interface ProjectsServiceDeps {
  store: Store;
  clock: Clock;
}

export function createProjectsService({ store, clock }: ProjectsServiceDeps) {
  return {
    async list(orgId: string, page: PageRequest & { status?: ProjectStatus | undefined }): Promise<PageResult<ProjectListItem>> {
      const before = decodeCursor(page.cursor);
      const rows = await store.repos.projects.list(orgId, page.limit, before, page.status ?? null);
      return pageResult(rows, toListItem);
    },

    async get(orgId: string, projectId: string): Promise<Project> {
      const row = await store.repos.projects.findById(orgId, projectId);
      if (!row) throw errors.notFound('project');
      return toProject(row);
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
          created_at: now,
          updated_at: now,
        });
        await recordEvent(repos, { orgId, type: 'project.created', data: eventData(inserted), occurredAt: now });
        await recordAudit(repos, actor, {
          action: 'project.created',
          target: projectTarget(inserted),
          changes: createdChanges({ name: inserted.name, description: inserted.description, status: inserted.status }),
          at: now,
        });
        return inserted;
      });
      return toProject(row);
    },

    async update(actor: Actor, projectId: string, input: UpdateProjectInput): Promise<Project> {
      authorize(actor, 'projects', 'update');
      await requireWritable(store.repos, actor);
      if (input.name !== undefined) checkName(input.name);
      const { orgId } = actor;
      const now = clock.now();
      const result = await store.transaction(async (repos) => {
        const current = await repos.projects.findById(orgId, projectId);
        if (!current) throw errors.notFound('project');
        const next = {
          name: input.name ?? current.name,
          description: input.description === undefined ? current.description : emptyToNull(input.description),
          status: input.status ?? current.status,
        };
        const previous: Record<string, unknown> = {};
        for (const field of ['name', 'description', 'status'] as const) {
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
          changes: diffChanges(current, next, ['name', 'description', 'status']),
          at: now,
        });
        return { row: updated, changed: true };
      });
      return toProject(result.row);
    },

    async remove(actor: Actor, projectId: string): Promise<void> {
      authorize(actor, 'projects', 'delete');
      await requireWritable(store.repos, actor);
      const { orgId } = actor;
      const now = clock.now();
      await store.transaction(async (repos) => {
        const current = await repos.projects.findById(orgId, projectId);
        if (!current) throw errors.notFound('project');
        await repos.projects.deleteWithChildren(orgId, projectId);
        await recordEvent(repos, {
          orgId,
          type: 'project.deleted',
          data: { project_id: current.id, name: current.name, status: current.status },
          occurredAt: now,
        });
        await recordAudit(repos, actor, { action: 'project.deleted', target: projectTarget(current), at: now });
      });
    },
  };
}

export type ProjectsService = ReturnType<typeof createProjectsService>;
