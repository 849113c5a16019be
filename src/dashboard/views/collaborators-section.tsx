import type { ProjectRole } from '../../db/schema.js';
import { type Collaborator, type Project, PROJECT_ROLES } from '../../schemas/projects.js';
import type { PageContext } from '../context.js';
import type { MemberOption } from '../members-options.js';
import { ActionForm, CsrfField, Disclosure, errorFor, RadioGroup, Select, Table, type FormError } from './components.js';

/** DASHBOARD 13's words for the project roles. */
export const PROJECT_ROLE_LABELS: Record<ProjectRole, string> = { viewer: 'Viewer', editor: 'Editor', manager: 'Manager' };
const PROJECT_ROLE_OPTIONS = PROJECT_ROLES.map((value) => ({ value, label: PROJECT_ROLE_LABELS[value] }));

/** The field id of a collaborator's "Project role" select in their row. */
export const collaboratorRoleId = (userId: string) => `project-role-${userId}`;

/** What "Add collaborator" was given, shown again with a refusal. */
export interface CollaboratorValues {
  user_id: string;
  role: string;
}

interface CollaboratorsSectionProps {
  page: PageContext;
  project: Project;
  collaborators: readonly Collaborator[];
  /** The organisation's members, for "Person" (empty for those who cannot manage). */
  people: readonly MemberOption[];
  errors: readonly FormError[];
  values?: CollaboratorValues | undefined;
  /** Manager, admin or owner, in a workspace that takes changes: the controls are offered. */
  canManage: boolean;
}

const projectHref = (id: string) => `/dashboard/projects/${encodeURIComponent(id)}`;

/**
 * The project page's "Collaborators" section (DASHBOARD 13): the table for everyone who sees the project; a
 * role select, "Save role" and "Remove" per row, "Add collaborator" and "Visibility" for those who manage it.
 */
export function CollaboratorsSection({ page, project, collaborators, people, errors: problems, values, canManage }: CollaboratorsSectionProps) {
  const { csrf } = page;
  const here = projectHref(project.id);
  const taken = new Set(collaborators.map((c) => c.user.id));
  const candidates = people.filter((p) => !taken.has(p.value));
  const isPrivate = project.visibility === 'private';
  return (
    <section aria-labelledby="collaborators-title">
      <h2 id="collaborators-title">Collaborators</h2>
      <p class="muted">
        {isPrivate
          ? 'This project is private: only its collaborators, admins and owners see it. Tasks and workflow steps can be assigned to them only.'
          : `Everyone in ${page.viewer.organizationName} sees this project. A project role gives someone more rights here than their role in the organisation.`}
      </p>
      <Table caption="Collaborators" captionHidden headers={['Name', 'Email', 'Project role', ...(canManage ? ['Actions'] : [])]} empty="No collaborators yet.">
        {collaborators.map((c) => (
          <tr>
            <td>{c.user.name ?? <span class="muted">Not set</span>}</td>
            <td>{c.user.email}</td>
            <td>{canManage ? null : PROJECT_ROLE_LABELS[c.role]}
              {canManage ? (
                <form method="post" action={`${here}/collaborators/${encodeURIComponent(c.user.id)}/role`} class="inline-form">
                  <CsrfField token={csrf} />
                  <Select id={collaboratorRoleId(c.user.id)} name="role" label="Project role" hiddenLabel options={PROJECT_ROLE_OPTIONS} value={c.role} error={errorFor(problems, collaboratorRoleId(c.user.id))} />
                  <button type="submit" class="button secondary">
                    Save role
                  </button>
                </form>
              ) : null}
            </td>
            {canManage ? (
              <td>
                <ActionForm action={`${here}/collaborators/${encodeURIComponent(c.user.id)}/remove`} csrf={csrf} label="Remove" secondary ariaLabel={`Remove ${c.user.name ?? c.user.email}`} />
              </td>
            ) : null}
          </tr>
        ))}
      </Table>
      {canManage ? (
        <>
          <Disclosure summary="Add collaborator" open={problems.some((p) => p.field?.startsWith('collaborator-'))}>
            <form method="post" action={`${here}/collaborators`} aria-label="Add collaborator">
              <CsrfField token={csrf} />
              <Select
                id="collaborator-person"
                name="user_id"
                label="Person"
                options={[{ value: '', label: candidates.length === 0 ? 'Everyone is a collaborator already' : 'Choose a person' }, ...candidates]}
                value={values?.user_id ?? ''}
                error={errorFor(problems, 'collaborator-person')}
              />
              <Select id="collaborator-role" name="role" label="Project role" options={PROJECT_ROLE_OPTIONS} value={values?.role || 'editor'} error={errorFor(problems, 'collaborator-role')} />
              <button type="submit">Add collaborator</button>
            </form>
          </Disclosure>
          <form method="post" action={`${here}/visibility`} aria-label="Visibility">
            <CsrfField token={csrf} />
            <RadioGroup
              legend="Visibility"
              name="visibility"
              options={[
                { value: 'organization', label: `Everyone in ${page.viewer.organizationName}` },
                { value: 'private', label: 'Only collaborators' },
              ]}
              value={project.visibility}
              error={errorFor(problems, 'visibility')}
            />
            <button type="submit" class="secondary">
              Save visibility
            </button>
          </form>
        </>
      ) : null}
    </section>
  );
}
