import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { DomainError, errors } from '../../errors.js';
import { KEY_EXPIRY_CHOICES, type CreatedKey, type KeyListItem } from '../../services/identity/api-keys-service.js';
import { parseScope } from '../../services/access/permissions.js';
import { RESOURCE_KINDS, type ResourceKind } from '../../schemas/access.js';
import type { AppDeps } from '../../http/app-deps.js';
import { pageContext, pageRefusal, pathId, seeOther, sendPage, type PageContext } from '../context.js';
import { flashSecret } from '../flash.js';
import { isWritable } from '../../services/access/workspace.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { ConfirmActions, Email, errorFor, Field, RadioGroup, Select, Table, Time, type FormError } from '../views/components.js';
import { Layout, type Viewer } from '../views/layout.js';

const HERE = '/dashboard/api-keys';

const KIND_LABELS: Record<ResourceKind, string> = {
  projects: 'Projects',
  users: 'Users',
  webhooks: 'Webhooks',
  workflows: 'Workflows',
  tasks: 'Tasks',
  events: 'Events',
  audit_log: 'Audit log',
  api_keys: 'API keys',
  exports: 'Exports',
};

type Access = 'full' | 'read' | 'restricted';
type Level = 'none' | 'read' | 'write';

const ACCESS_OPTIONS: readonly { value: Access; label: string }[] = [
  { value: 'full', label: 'Full access' },
  { value: 'read', label: 'Read only' },
  { value: 'restricted', label: 'Restricted' },
];

const LEVEL_OPTIONS: readonly { value: Level; label: string }[] = [
  { value: 'none', label: 'None' },
  { value: 'read', label: 'Read' },
  { value: 'write', label: 'Write' },
];

const AccessField = Type.Optional(Type.Union(ACCESS_OPTIONS.map((o) => Type.Literal(o.value))));
const LevelField = Type.Optional(Type.Union(LEVEL_OPTIONS.map((o) => Type.Literal(o.value))));

/** "Expires" (DASHBOARD 14): days, or never. */
const EXPIRY_OPTIONS: readonly { value: string; label: string; days: number | null }[] = [
  ...KEY_EXPIRY_CHOICES.map((days) => ({ value: String(days), label: days === 365 ? '1 year' : `${days} days`, days })),
  { value: 'never', label: 'Never', days: null },
];

const CreateKeyBody = FormBody({
  name: FormText(1024),
  access: AccessField,
  expires: Type.Optional(Type.Union(EXPIRY_OPTIONS.map((o) => Type.Literal(o.value)))),
  ...Object.fromEntries(RESOURCE_KINDS.map((kind) => [kind, LevelField])),
});

const KeyParams = Type.Object({ id: Type.String({ maxLength: 128 }) });


/** What the create form holds, to show it again after a refusal. */
interface KeyForm {
  name: string;
  access: Access | undefined;
  expires: string;
  levels: Record<ResourceKind, Level>;
}

const noLevels = () => Object.fromEntries(RESOURCE_KINDS.map((kind) => [kind, 'none'])) as Record<ResourceKind, Level>;

const EMPTY_FORM: KeyForm = { name: '', access: 'full', expires: 'never', levels: noLevels() };

/** The choices the organisation's maximum lifetime leaves (CONTRACT 16), and the one preselected. */
function expiryChoices(maxDays: number | null) {
  const options = EXPIRY_OPTIONS.filter((o) => maxDays === null || (o.days !== null && o.days <= maxDays));
  return { options, preselected: maxDays === null ? 'never' : options[options.length - 1]!.value };
}

/** The contract's scope string for the form's choices (CONTRACT 9); '' when nothing is granted. */
export function scopeFromForm(form: KeyForm): string {
  if (form.access === 'full' || form.access === 'read') return form.access;
  if (form.access !== 'restricted') return '';
  return RESOURCE_KINDS.filter((kind) => form.levels[kind] !== 'none')
    .map((kind) => (form.levels[kind] === 'read' ? `${kind}:read` : kind))
    .join(',');
}

/** A scope in words: "Full access", "Read only", "Restricted: Projects Read, Webhooks Write". */
export function accessInWords(scopeText: string): string {
  const scope = parseScope(scopeText);
  if (!scope) return scopeText;
  if (scope.kind === 'full') return 'Full access';
  if (scope.kind === 'read') return 'Read only';
  const grants = RESOURCE_KINDS.filter((kind) => scope.grants.has(kind)).map(
    (kind) => `${KIND_LABELS[kind]} ${scope.grants.get(kind) === 'read' ? 'Read' : 'Write'}`,
  );
  return `Restricted: ${grants.join(', ')}`;
}

const isManager = (viewer: Viewer) => viewer.role === 'owner' || viewer.role === 'admin';

function KeysTable({ keys, viewer, now }: { keys: readonly KeyListItem[]; viewer: Viewer; now: number }) {
  const showOwner = isManager(viewer);
  const headers = ['Name', 'Prefix', 'Access', ...(showOwner ? ['Owner'] : []), 'Created', 'Last used', 'Expires', 'Actions'];
  return (
    <Table caption="API keys" captionHidden headers={headers} empty="No API keys yet.">
      {keys.map((key) => (
        <tr>
          <td>{key.name ?? <span class="muted">Unnamed</span>}</td>
          <td>
            <code>{key.prefix}…</code>
          </td>
          <td>{accessInWords(key.scope)}</td>
          {showOwner ? <td>{key.owner_name ?? <Email address={key.owner_email} />}</td> : null}
          <td>
            <Time iso={key.created_at} />
          </td>
          <td>
            <Time iso={key.last_used_at} never="Never" />
          </td>
          <td>{key.expires_at !== null && Date.parse(key.expires_at) <= now ? <strong>Expired</strong> : <Time iso={key.expires_at} absolute never="Never" />}</td>
          <td>
            <a href={`${HERE}/${encodeURIComponent(key.id)}/revoke`}>Revoke</a>
          </td>
        </tr>
      ))}
    </Table>
  );
}

function CreateKeyForm({ form, errors: formErrors, csrf, maxDays }: { form: KeyForm; errors: readonly FormError[]; csrf: string; maxDays: number | null }) {
  const expiry = expiryChoices(maxDays);
  const chosen = expiry.options.some((o) => o.value === form.expires) ? form.expires : expiry.preselected;
  return (
    <section aria-labelledby="create-key-title" class="panel">
      <h2 id="create-key-title">Create API key</h2>
      <form method="post" action={HERE}>
        <input type="hidden" name="_csrf" value={csrf} />
        <Field id="name" label="Name" value={form.name} error={errorFor(formErrors, 'name')} hint="Optional: what the key is for." maxLength={255} autocomplete="off" />
        <Select id="expires" label="Expires" options={expiry.options} value={chosen} error={errorFor(formErrors, 'expires')} />
        {maxDays !== null ? <p class="hint">This organisation's keys expire within {maxDays} days.</p> : null}
        <RadioGroup legend="Access" name="access" options={ACCESS_OPTIONS} value={form.access} error={errorFor(formErrors, 'access')} />
        <div class="restricted">
          <p class="hint">With Restricted access, choose what the key may do with each kind of resource.</p>
          {RESOURCE_KINDS.map((kind) => (
            <RadioGroup legend={KIND_LABELS[kind]} name={kind} options={LEVEL_OPTIONS} value={form.levels[kind]} inline />
          ))}
        </div>
        <p class="hint">A key can never do more than your role allows, even with full access.</p>
        <button type="submit">Create key</button>
      </form>
    </section>
  );
}

function NewKey({ created }: { created: { key: string } }) {
  return (
    <section aria-labelledby="new-key-title" class="panel">
      <h2 id="new-key-title">Your new key</h2>
      <p>Copy it now and keep it somewhere safe: it is shown only this once.</p>
      <div class="secret">
        <label for="new-key">Your new API key</label>
        <input id="new-key" type="text" value={created.key} readOnly autocomplete="off" />
        <button type="button" data-copy-target="new-key" hidden>
          Copy
        </button>
      </div>
    </section>
  );
}

interface ApiKeysViewProps {
  page: PageContext;
  keys: readonly KeyListItem[];
  /** The organisation's maximum key lifetime in days, or null. */
  maxDays: number | null;
  now: number;
  form?: KeyForm;
  errors?: readonly FormError[];
}

function ApiKeysView({ page, keys, maxDays, now, form = EMPTY_FORM, errors: formErrors = [] }: ApiKeysViewProps) {
  const created = flashSecret(page.viewer.flash, 'api_key');
  return (
    <Layout title="API keys" viewer={page.viewer} csrf={page.csrf} current={HERE} errors={formErrors}>
      {created ? <NewKey created={{ key: created.value }} /> : null}
      <p>
        {isManager(page.viewer)
          ? 'Every API key of the organisation, with the member it belongs to.'
          : 'Your API keys. A key acts as you, within your current role.'}
      </p>
      <KeysTable keys={keys} viewer={page.viewer} now={now} />
      {/* A read-only workspace takes no new keys (revoking stays open); the banner says why. */}
      {isWritable(page.actor) ? <CreateKeyForm form={form} errors={formErrors} csrf={page.csrf} maxDays={maxDays} /> : null}
    </Layout>
  );
}

/** A service refusal as the form's errors; the scope rule is the service's, the sentence is ours. */
function formErrorsOf(err: DomainError, form: KeyForm): FormError[] {
  const details = err.details ?? [];
  if (details.length === 0) return [{ field: null, message: err.message }];
  return details.map((d) => {
    if (d.field === 'scope') {
      const message =
        form.access === 'restricted'
          ? 'Choose Read or Write for at least one of Projects, Users and Webhooks'
          : 'Choose the access the key has';
      return { field: 'access', message };
    }
    if (d.field === 'name') return { field: 'name', message: `Name ${d.message}` };
    if (d.field === 'expires_at') return { field: 'expires', message: `Expires: the key ${d.message.replace(/^is required: /, 'needs an expiry: ')}` };
    return { field: null, message: `${d.field} ${d.message}` };
  });
}

/** DASHBOARD 4: a member's own keys (admins and owners: every key of the organisation), created and revoked here. */
export const apiKeysPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services, clock }) => {
  const apiKeys = services.apiKeys;
  const now = () => clock?.now() ?? Date.now();
  const maxDaysOf = async (page: PageContext) => (await services.accountSecurity.requirement(page.actor)).maxKeyLifetimeDays;

  // A new key's secret reaches this page once, through the session's one-time slot: a reload shows the
  // list, never the key, and never makes a second one.
  app.get('/api-keys', { schema: pageSchema() }, async (request, reply) => {
    const page = pageContext(request);
    const [keys, maxDays] = await Promise.all([apiKeys.list(page.actor), maxDaysOf(page)]);
    return sendPage(reply, <ApiKeysView page={page} keys={keys} maxDays={maxDays} now={now()} />);
  });

  app.post('/api-keys', { schema: { hide: true, body: CreateKeyBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const { name = '', access, expires = 'never' } = request.body;
    const given = request.body as Partial<Record<ResourceKind, Level>>;
    const form: KeyForm = { name, access, expires, levels: Object.fromEntries(RESOURCE_KINDS.map((kind) => [kind, given[kind] ?? 'none'])) as Record<ResourceKind, Level> };
    let created: CreatedKey;
    try {
      const days = EXPIRY_OPTIONS.find((o) => o.value === expires)?.days ?? null;
      created = await apiKeys.create(page.actor, { scope: scopeFromForm(form), name, expiresAt: days === null ? null : now() + days * 86_400_000 });
    } catch (error) {
      const err = pageRefusal(reply, error, [400, 403, 409]);
      const [keys, maxDays] = await Promise.all([apiKeys.list(page.actor), maxDaysOf(page)]);
      return sendPage(reply, <ApiKeysView page={page} keys={keys} maxDays={maxDays} now={now()} form={form} errors={formErrorsOf(err, form)} />, err.status);
    }
    return seeOther(reply, HERE, {
      notice: `API key ${created.name ? `"${created.name}" ` : ''}created.`,
      secret: { kind: 'api_key', id: created.id, value: created.key },
    });
  });

  /** The key as the viewer may see it (their own; managers: any of the organisation), or a 404 page. */
  async function visibleKey(page: PageContext, id: string): Promise<KeyListItem> {
    pathId(id, 'API key');
    const key = (await apiKeys.list(page.actor)).find((k) => k.id === id);
    if (!key) throw errors.notFound('API key');
    return key;
  }

  app.get('/api-keys/:id/revoke', { schema: { ...pageSchema(), params: KeyParams } }, async (request, reply) => {
    const page = pageContext(request);
    const key = await visibleKey(page, request.params.id);
    const action = `${HERE}/${encodeURIComponent(key.id)}/revoke`;
    return sendPage(
      reply,
      <Layout title="Revoke API key" viewer={page.viewer} csrf={page.csrf} current={HERE}>
        <p class="lead">
          Revoke the key <strong>{key.name ?? 'Unnamed'}</strong> (<code>{key.prefix}…</code>, {accessInWords(key.scope)}
          {isManager(page.viewer) ? `, belonging to ${key.owner_name ?? key.owner_email}` : ''})?
        </p>
        <p>Anything using it is refused from its next request on. This cannot be undone.</p>
        <ConfirmActions action={action} csrf={page.csrf} label="Revoke key" cancelHref={HERE} cancelLabel="Keep the key" />
      </Layout>,
    );
  });

  // The service decides whose key this may be: another member's key is a 404 to a non-manager.
  app.post('/api-keys/:id/revoke', { schema: { hide: true, params: KeyParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const key = await apiKeys.revoke(page.actor, pathId(request.params.id, 'API key'));
    return seeOther(reply, HERE, { notice: `API key ${key.name ? `"${key.name}" (${key.prefix}…)` : `${key.prefix}…`} revoked.` });
  });
};
