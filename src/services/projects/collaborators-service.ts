import type { ProjectRole, ProjectRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { errors } from '../../errors.js';
import type { Clock } from '../../lib/time.js';
import type { Actor } from '../access/actor.js';
import { EVERY_PROJECT_ROLES, requireProject, requireRight, requireScope, requireWritableUpFront } from '../access/project-access.js';
import { recordAudit } from '../audit/audit-record.js';
import { decodeCursor, pageResult, type PageRequest, type PageResult } from '../shared/pagination.js';
import { toPage } from '../../db/repositories/executor.js';
import type { Collaborator } from '../../schemas/projects.js';
import { toCollaborator } from './collaborators-view.js';

export interface CollaboratorsServiceDeps {
  store: Store;
  clock: Clock;
}

/** What PUT did: 201 when the user was added, 200 otherwise (the role changed, or was already that). */
export interface PutCollaboratorResult {
  collaborator: Collaborator;
  created: boolean;
}

const projectTarget = (row: ProjectRow) => ({ type: 'project', id: row.id, label: row.name });

/**
 * A project's collaborators (CONTRACT 15). Anyone who sees the project lists them; its managers, admins and
 * owners add, change and remove them. Every change is an audit row (no webhook event: the specification fixes
 * the event names). Removing someone from a private project clears their open tasks there in the same
 * transaction, so nobody stays assigned to work they can no longer see.
 */
export function createCollaboratorsService({ store, clock }: CollaboratorsServiceDeps) {
  /** The checks that need no read of the project, in the contract's order: the key's scope, then read-only. */
  async function manage(actor: Actor): Promise<void> {
    requireScope(actor, 'projects', 'update');
    await requireWritableUpFront(store.repos, actor);
  }

  return {
    async list(actor: Actor, projectId: string, page: PageRequest): Promise<PageResult<Collaborator>> {
      await requireProject(store.repos, actor, projectId, 'projects', 'read');
      const rows = await store.repos.collaborators.page(actor.orgId, projectId, page.limit + 1, decodeCursor(page.cursor));
      return pageResult(toPage(rows, page.limit), toCollaborator);
    },

    /** Every collaborator of a project, newest first (the dashboard's table). */
    async all(actor: Actor, projectId: string): Promise<Collaborator[]> {
      await requireProject(store.repos, actor, projectId, 'projects', 'read');
      return (await store.repos.collaborators.all(actor.orgId, projectId)).map(toCollaborator);
    },

    /**
     * Who may be assigned work in the project (CONTRACT 15): null when anyone of the organisation may (it is
     * not private); otherwise its collaborators, admins and owners. For the doors' pickers.
     */
    async assignableIds(actor: Actor, projectId: string): Promise<ReadonlySet<string> | null> {
      const { project } = await requireProject(store.repos, actor, projectId, 'projects', 'read');
      if (project.visibility !== 'private') return null;
      const [collaborators, everyProject] = await Promise.all([
        store.repos.collaborators.all(actor.orgId, projectId),
        store.repos.users.idsWithRoles(actor.orgId, EVERY_PROJECT_ROLES),
      ]);
      return new Set([...collaborators.map((c) => c.user_id), ...everyProject]);
    },

    async put(actor: Actor, projectId: string, userId: string, role: ProjectRole): Promise<PutCollaboratorResult> {
      await manage(actor);
      const { orgId } = actor;
      const now = clock.now();
      return store.transaction(async (repos) => {
        const access = await requireProject(repos, actor, projectId, 'projects', 'update');
        requireRight(actor, access, 'projects', 'update', 'manage');
        const user = await repos.users.findById(orgId, userId);
        if (!user) throw errors.notFound('user');
        const current = await repos.collaborators.find(orgId, projectId, userId);
        const target = projectTarget(access.project);
        if (!current) {
          await repos.collaborators.insert({ org_id: orgId, project_id: projectId, user_id: userId, role, created_at: now, updated_at: now });
          await recordAudit(repos, actor, {
            action: 'project.collaborator_added',
            target,
            changes: { collaborator: { old: null, new: user.email }, role: { old: null, new: role } },
            at: now,
          });
        } else if (current.role !== role) {
          await repos.collaborators.setRole(orgId, projectId, userId, role, now);
          await recordAudit(repos, actor, {
            action: 'project.collaborator_role_changed',
            target,
            changes: { collaborator: { old: user.email, new: user.email }, role: { old: current.role, new: role } },
            at: now,
          });
        }
        const created = current === undefined;
        const createdAt = current?.created_at ?? now;
        return { collaborator: toCollaborator({ seq: 0, project_id: projectId, user_id: userId, role, created_at: createdAt, email: user.email, name: user.name }), created };
      });
    },

    /** Removes a collaborator; in a private project their open tasks there become unassigned (no event). */
    async remove(actor: Actor, projectId: string, userId: string): Promise<void> {
      await manage(actor);
      const { orgId } = actor;
      const now = clock.now();
      await store.transaction(async (repos) => {
        const access = await requireProject(repos, actor, projectId, 'projects', 'update');
        requireRight(actor, access, 'projects', 'update', 'manage');
        const current = await repos.collaborators.find(orgId, projectId, userId);
        if (!current) throw errors.notFound('collaborator');
        const user = await repos.users.findById(orgId, userId);
        await repos.collaborators.delete(orgId, projectId, userId);
        const unassigned = access.project.visibility === 'private' ? await repos.tasks.unassignUserInProject(orgId, projectId, userId, now) : 0;
        await recordAudit(repos, actor, {
          action: 'project.collaborator_removed',
          target: projectTarget(access.project),
          changes: {
            collaborator: { old: user?.email ?? userId, new: null },
            role: { old: current.role, new: null },
            ...(unassigned > 0 ? { unassigned_tasks: { old: null, new: unassigned } } : {}),
          },
          at: now,
        });
      });
    },
  };
}

export type CollaboratorsService = ReturnType<typeof createCollaboratorsService>;
