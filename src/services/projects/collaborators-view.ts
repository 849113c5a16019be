import type { ProjectCollaboratorRow } from '../../db/schema.js';
import type { CollaboratorListRow } from '../../db/repositories/collaborators-repo.js';
import { toIso } from '../../lib/time.js';
import type { Collaborator } from '../../schemas/projects.js';

export function toCollaborator(row: CollaboratorListRow): Collaborator {
  return { user: { id: row.user_id, email: row.email, name: row.name }, role: row.role, created_at: toIso(row.created_at) };
}

/** A collaborator as the data export writes it (one line of project_collaborators.ndjson). */
export function toCollaboratorRecord(row: ProjectCollaboratorRow) {
  return { project_id: row.project_id, user_id: row.user_id, role: row.role, created_at: toIso(row.created_at), updated_at: toIso(row.updated_at) };
}
