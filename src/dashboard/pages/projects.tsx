import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ProjectStatus } from '../../db/schema.js';
import { canChange } from '../../services/access/workspace.js';
import { CreateProjectBody } from '../../schemas/projects.js';
import type { ProjectSummary } from '../../services/projects/projects-service.js';
import type { AppDeps } from '../../http/app-deps.js';
import { authorizeChange, pageContext, pageRefusal, seeOther, sendPage, type PageContext } from '../context.js';
import { formErrors, validateAs } from '../form-validation.js';
import { FormBody, FormText, pageSchema } from '../schemas.js';
import { Clipped, CsrfField, Disclosure, errorFor, Field, Select, Table, TextArea, Time, type FormError } from '../views/components.js';
import { Layout } from '../views/layout.js';

const PAGE_SIZE = 50;

const STATUS_LABELS: Record<ProjectStatus, string> = { active: 'Active', archived: 'Archived', draft: 'Draft' };

const ListQuery = Type.Object(
  {
    status: Type.Optional(Type.Union([Type.Literal(''), Type.Literal('active'), Type.Literal('archived'), Type.Literal('draft')])),
    cursor: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);

const CreateForm = FormBody({ name: FormText(1024), description: FormText(4096), status: FormText(16) });

interface NewProjectValues {
  name?: string | undefined;
  description?: string | undefined;
  status?: string | undefined;
}

export const projectPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  async function render(
    page: PageContext,
    query: { status?: ProjectStatus | undefined; cursor?: string | undefined },
    form: { values?: NewProjectValues; errors?: FormError[] } = {},
  ) {
    const list = await services.projects.list(page.actor, { limit: PAGE_SIZE, cursor: query.cursor, status: query.status });
    const filterSuffix = query.status ? `status=${query.status}&` : '';
    return (
      <Layout title="Projects" viewer={page.viewer} csrf={page.csrf} current="/dashboard/projects" errors={form.errors}>
        {canChange(page.actor, 'projects', 'create') ? (
          // Open while there is nothing to list: then the form is what the page is for.
          <NewProjectForm csrf={page.csrf} values={form.values} errors={form.errors} open={Boolean(form.errors?.length) || (list.items.length === 0 && !query.status && !query.cursor)} />
        ) : null}
        <form method="get" action="/dashboard/projects" class="filters" role="search" aria-label="Filter projects">
          <Select
            id="filter-status"
            name="status"
            label="Filter by status"
            value={query.status ?? ''}
            options={[{ value: '', label: 'All statuses' }, ...Object.entries(STATUS_LABELS).map(([value, label]) => ({ value, label }))]}
          />
          <button type="submit" class="secondary">
            Filter
          </button>
        </form>
        <ProjectsTable items={list.items} />
        <nav class="pager" aria-label="Pages of projects">
          {query.cursor ? <a href={`/dashboard/projects?${filterSuffix}`.replace(/[?&]$/, '')}>Newest</a> : null}
          {list.nextCursor ? <a href={`/dashboard/projects?${filterSuffix}cursor=${encodeURIComponent(list.nextCursor)}`}>Older</a> : null}
        </nav>
      </Layout>
    );
  }

  app.get('/projects', { schema: pageSchema(ListQuery) }, async (request, reply) => {
    const page = pageContext(request);
    const { status, cursor } = request.query;
    try {
      return sendPage(reply, await render(page, { status: status || undefined, cursor }));
    } catch (error) {
      // A stale or hand-edited cursor: the first page, with the problem said.
      const refusal = pageRefusal(reply, error, [400]);
      return sendPage(reply, await render(page, { status: status || undefined }, { errors: formErrors(refusal) }), 400);
    }
  });

  app.post('/projects', { schema: { hide: true, body: CreateForm, response: pageSchema().response } }, async (request, reply) => {
    const page = pageContext(request);
    const { name = '', description = '', status = 'active' } = request.body;
    try {
      authorizeChange(page.actor, 'projects', 'create');
      const input = validateAs<{ name: string; description?: string; status?: 'active' | 'draft' }>(CreateProjectBody, {
        name,
        ...(description === '' ? {} : { description }),
        status,
      });
      const project = await services.projects.create(page.actor, input);
      return seeOther(reply, `/dashboard/projects/${encodeURIComponent(project.id)}`, { notice: `Project "${project.name}" created.` });
    } catch (error) {
      const refusal = pageRefusal(reply, error);
      const errors = formErrors(refusal, { name: 'Name', description: 'Description', status: 'Status' });
      return sendPage(reply, await render(page, {}, { values: request.body, errors }), refusal.status);
    }
  });
};

function ProjectsTable({ items }: { items: ProjectSummary[] }) {
  return (
    <Table caption="Projects" captionHidden headers={['Name', 'Status', 'Created']} empty="No projects yet.">
      {items.map((p) => (
        <tr>
          <td>
            <a href={`/dashboard/projects/${encodeURIComponent(p.id)}`}>
              <Clipped text={p.name} />
            </a>
            {p.visibility === 'private' ? <span class="badge private">Private</span> : null}
          </td>
          <td>{STATUS_LABELS[p.status]}</td>
          <td>
            <Time iso={p.created_at} />
          </td>
        </tr>
      ))}
    </Table>
  );
}

function NewProjectForm({ csrf, values = {}, errors, open }: { csrf: string; values?: NewProjectValues | undefined; errors?: FormError[] | undefined; open: boolean }) {
  return (
    <Disclosure summary="New project" open={open}>
      <form method="post" action="/dashboard/projects">
        <CsrfField token={csrf} />
        <Field id="name" label="Name" value={values.name} error={errorFor(errors, 'name')} required maxLength={255} />
        <TextArea id="description" label="Description" value={values.description} error={errorFor(errors, 'description')} maxLength={1000} hint="Optional, up to 1,000 characters." />
        <Select
          id="status"
          label="Status"
          value={values.status ?? 'active'}
          error={errorFor(errors, 'status')}
          options={[
            { value: 'active', label: 'Active' },
            { value: 'draft', label: 'Draft' },
          ]}
        />
        <button type="submit">Create project</button>
      </form>
    </Disclosure>
  );
}
