import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, Timestamp } from './common.js';

const ProjectStatus = Type.Union([Type.Literal('active'), Type.Literal('archived'), Type.Literal('draft')], { title: 'ProjectStatus' });
const Name = Type.String({ minLength: 1, maxLength: 255, description: '1 to 255 characters (code points), not blank (at least one character that is neither white space nor invisible).' });
const Description = Type.Union([Type.String({ maxLength: 1000 }), Type.Null()], {
  description: 'At most 1,000 characters; "" or null clears it.',
});

export const Project = Type.Object(
  {
    id: Type.String({ examples: ['proj_0123456789abcdefghijklmn'] }),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    status: ProjectStatus,
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

export const ListProjectsQuery = Type.Object({ ...PageQuery, status: Type.Optional(ProjectStatus) });

export const CreateProjectBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('draft')], { description: 'Default active.' })),
  },
  { additionalProperties: false, title: 'CreateProjectRequest' },
);

export const UpdateProjectBody = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Description), status: Type.Optional(ProjectStatus) },
  { additionalProperties: false, title: 'UpdateProjectRequest', description: 'Only the fields given change.' },
);
