import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, Timestamp } from './common.js';

const ProjectStatus = Type.Union([Type.Literal('active'), Type.Literal('archived'), Type.Literal('draft')], { title: 'ProjectStatus' });
const Name = Type.String({ minLength: 1, maxLength: 255, description: '1 to 255 characters (code points), not blank (at least one character that is neither white space nor invisible).' });
/** CONTRACT 15: who sees a project. */
export const PROJECT_VISIBILITIES = ['organization', 'private'] as const;
const ProjectVisibility = Type.Union([Type.Literal('organization'), Type.Literal('private')], {
  title: 'ProjectVisibility',
  description: '`organization`: every member sees the project; `private`: only its collaborators, admins and owners.',
});

/** CONTRACT 15: a collaborator's role on one project, lowest first. */
export const PROJECT_ROLES = ['viewer', 'editor', 'manager'] as const;
export const ProjectRoleSchema = Type.Union([Type.Literal('viewer'), Type.Literal('editor'), Type.Literal('manager')], {
  title: 'ProjectRole',
  description: '`viewer` reads; `editor` also changes the project and its workflows, runs and tasks; `manager` also changes visibility and collaborators and deletes the project.',
});

const Description = Type.Union([Type.String({ maxLength: 1000 }), Type.Null()], {
  description: 'At most 1,000 characters; "" or null clears it.',
});

export const Project = Type.Object(
  {
    id: Type.String({ examples: ['proj_0123456789abcdefghijklmn'] }),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    status: ProjectStatus,
    visibility: ProjectVisibility,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Project', title: 'Project' },
);
export type Project = Static<typeof Project>;

export const ProjectListItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: ProjectStatus,
  created_at: Timestamp,
}, { title: 'ProjectListItem' });
export type ProjectListItem = Static<typeof ProjectListItem>;

export const ProjectList = ListEnvelope(ProjectListItem, 'ProjectList');

export const ListProjectsQuery = Type.Object({ ...PageQuery, status: Type.Optional(ProjectStatus), visibility: Type.Optional(ProjectVisibility) });

export const CreateProjectBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('draft')], { description: 'Default active.' })),
    visibility: Type.Optional(ProjectVisibility),
  },
  { additionalProperties: false, title: 'CreateProjectRequest' },
);

export const UpdateProjectBody = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Description), status: Type.Optional(ProjectStatus), visibility: Type.Optional(ProjectVisibility) },
  {
    additionalProperties: false,
    title: 'UpdateProjectRequest',
    description: 'Only the fields given change. Changing `visibility` needs the project\'s manager role, an admin or an owner.',
  },
);

export const Collaborator = Type.Object(
  {
    user: Type.Object({
      id: Type.String({ examples: ['user_0123456789abcdefghijklmn'] }),
      email: Type.String({ examples: ['dana@example.com'] }),
      name: Type.Union([Type.String(), Type.Null()], { examples: ['Dana Reyes'] }),
    }),
    role: ProjectRoleSchema,
    created_at: Timestamp,
  },
  { title: 'Collaborator' },
);
export type Collaborator = Static<typeof Collaborator>;

export const CollaboratorList = ListEnvelope(Collaborator, 'CollaboratorList');

export const CollaboratorParams = Type.Object({ id: Type.String(), user_id: Type.String() });

export const PutCollaboratorBody = Type.Object(
  { role: ProjectRoleSchema },
  { additionalProperties: false, title: 'PutCollaboratorRequest', examples: [{ role: 'editor' }] },
);

