import type { Repositories } from '../../db/repositories/index.js';
import type { ProjectRole, Role, ScimGroupRole } from '../../db/schema.js';
import type { Actor } from '../access/actor.js';
import { recordAudit, userTarget } from '../audit/audit-record.js';

const ORG_RANK: Record<ScimGroupRole, number> = { viewer: 1, member: 2, admin: 3 };
const PROJECT_RANK: Record<ProjectRole, number> = { viewer: 1, editor: 2, manager: 3 };

/** The message of the 409 a hand change of a provisioned member's role meets (CONTRACT 16). */
export const MANAGED_BY_PROVIDER = "this member's role is managed by your identity provider: change their groups there, or the group mappings on the SCIM settings page";

/** Whether the provider manages this member's organisation role: provisioned, and not an owner (SCIM never changes owners). */
export function roleIsManaged(user: { provisioned_at: number | null; role: Role }): boolean {
  return user.provisioned_at !== null && user.role !== 'owner';
}

/** The highest organisation role among the groups' mappings, or the default with none. */
export function derivedOrgRole(groupRoles: readonly (ScimGroupRole | null)[], defaultRole: ScimGroupRole): ScimGroupRole {
  let best: ScimGroupRole | null = null;
  for (const role of groupRoles) if (role !== null && (best === null || ORG_RANK[role] > ORG_RANK[best])) best = role;
  return best ?? defaultRole;
}

/**
 * Brings provisioned members' roles in line with their groups, inside the caller's transaction: the
 * organisation role (owners never change), and the project role on every project some group maps (a
 * project no group maps is left to hand management). Returns the members whose organisation role changed,
 * for the caller to announce after commit (their cached principals carry the role).
 */
export async function syncProvisionedRoles(repos: Repositories, actor: Actor, userIds: readonly string[], now: number): Promise<string[]> {
  const orgId = actor.orgId;
  if (userIds.length === 0) return [];
  const [org, users, mappings] = await Promise.all([repos.organizations.findById(orgId), repos.users.findByIds(orgId, userIds), repos.scim.mappings(orgId)]);
  const provisioned = users.filter((u) => u.provisioned_at !== null);
  if (!org || provisioned.length === 0) return [];
  const groupsOf = await repos.scim.groupsOfUsers(orgId, provisioned.map((u) => u.id));
  const mappedProjects = new Set<string>();
  for (const mapping of mappings.values()) for (const p of mapping.projects) mappedProjects.add(p.projectId);
  // Read once, and only when a collaborator row is written: most syncs change no project role.
  let projectNames: Map<string, string> | undefined;
  const projectTarget = async (projectId: string) => {
    projectNames ??= new Map((await repos.projects.findByIds(orgId, [...mappedProjects])).map((p) => [p.id, p.name]));
    return { type: 'project', id: projectId, label: projectNames.get(projectId) ?? projectId };
  };

  const changed: string[] = [];
  for (const user of provisioned) {
    const groups = (groupsOf.get(user.id) ?? []).map((id) => mappings.get(id)).filter((m) => m !== undefined);
    if (user.role !== 'owner') {
      const role = derivedOrgRole(groups.map((g) => g.orgRole), org.scim_default_role);
      if (role !== user.role) {
        await repos.users.update(orgId, user.id, { role, updated_at: now });
        await recordAudit(repos, actor, { action: 'member.role_changed', target: userTarget(user), changes: { role: { old: user.role, new: role } }, at: now });
        changed.push(user.id);
      }
    }
    if (mappedProjects.size === 0) continue;
    const wanted = new Map<string, ProjectRole>();
    for (const group of groups) {
      for (const { projectId, role } of group.projects) {
        const held = wanted.get(projectId);
        if (held === undefined || PROJECT_RANK[role] > PROJECT_RANK[held]) wanted.set(projectId, role);
      }
    }
    const current = await repos.collaborators.rolesOfUser(orgId, user.id);
    for (const projectId of mappedProjects) {
      const want = wanted.get(projectId);
      const have = current.get(projectId);
      if (want === have) continue;
      const target = await projectTarget(projectId);
      if (want !== undefined && have === undefined) {
        await repos.collaborators.insert({ org_id: orgId, project_id: projectId, user_id: user.id, role: want, created_at: now, updated_at: now });
        await recordAudit(repos, actor, { action: 'project.collaborator_added', target, changes: { collaborator: { old: null, new: user.email }, role: { old: null, new: want } }, at: now });
      } else if (want !== undefined) {
        await repos.collaborators.setRole(orgId, projectId, user.id, want, now);
        await recordAudit(repos, actor, { action: 'project.collaborator_role_changed', target, changes: { collaborator: { old: user.email, new: user.email }, role: { old: have ?? null, new: want } }, at: now });
      } else {
        await repos.collaborators.delete(orgId, projectId, user.id);
        await recordAudit(repos, actor, { action: 'project.collaborator_removed', target, changes: { collaborator: { old: user.email, new: null }, role: { old: have ?? null, new: null } }, at: now });
      }
    }
  }
  return changed;
}
