import type { DeliveryCounts } from '../../services/webhooks/delivery-stats-service.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { DomainError } from '../../errors.js';
import { authorize, can } from '../../services/access/actor.js';
import type { PageResult } from '../../services/shared/pagination.js';
import type { CreateWebhookInput } from '../../services/webhooks/webhooks-service.js';
import { type CreatedWebhook, type Webhook, CreateWebhookBody } from '../../schemas/webhooks.js';
import type { AppDeps } from '../../http/app-deps.js';
import { authorizeChange, pageContext, pageRefusal, pathId, seeOther, sendPage, type PageContext } from '../context.js';
import { validateAs } from '../form-validation.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { ConfirmActions, CsrfField, errorFor, Field, Table, Time, Url, type FormError } from '../views/components.js';
import { Layout } from '../views/layout.js';
import { flashSecret } from '../flash.js';
import { canChange } from '../../services/access/workspace.js';
import { DeliveryControlFields, EventsGroup, SecretField, SubscriptionStatus } from '../views/webhook-views.js';
import { controlInput, controlValues, deliveryControlFields, RATE_LIMIT_LABEL, RATE_LIMIT_MESSAGE, type DeliveryControlValues } from '../delivery-control-form.js';
import { formatCount, formatShare } from '../views/numbers.js';

const HERE = '/dashboard/webhooks';

/**
 * The API's largest page. An organisation may hold any number of subscriptions, so the list is paged like
 * every other list of the dashboard (constant cost per page); nearly every organisation fits on one page
 * and never sees the pager.
 */
const PAGE_SIZE = 100;

const ListQuery = Type.Object({ cursor: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: false });

/**
 * Bounds only: the rules are the API's (`CreateWebhookBody`, checked with `validateAs`), so the bounds sit
 * above the API's limits and an over-long URL or secret gets the API's sentence on the page. Browsers send
 * one checked box as a string and several as repeated fields.
 */
const CreateForm = FormBody({
  url: FormText(4096),
  events: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32 })])),
  secret: FormText(1024),
  ...deliveryControlFields,
});

const WebhookParams = Type.Object({ id: Type.String({ maxLength: 128 }) });

/**
 * What the create form holds, to show it again after a refusal. The secret is shown again too: the answer
 * goes only to the browser that typed it (no-store, like every page), nothing was stored, and the person
 * must copy the very same value into their receiver anyway; making them type it again would only invite
 * a mismatch between the two.
 */
interface CreateFormValues {
  url: string;
  events: readonly string[];
  secret: string;
  control: DeliveryControlValues;
}

const EMPTY_FORM: CreateFormValues = { url: '', events: [], secret: '', control: { rateLimit: '', ordered: false } };

type Outcomes = Map<string, DeliveryCounts>;

/** "98.5% (197 of 200)": the last 24 hours' deliveries delivered by now, or "No deliveries". */
export function deliveredShare(counts: DeliveryCounts | undefined): string {
  if (!counts || counts.total === 0) return 'No deliveries';
  return `${formatShare(counts.delivered, counts.total)} (${formatCount(counts.delivered)} of ${formatCount(counts.total)})`;
}

const webhookHref = (id: string) => `${HERE}/${encodeURIComponent(id)}`;

function WebhooksTable({ webhooks, outcomes, canDelete }: { webhooks: readonly Webhook[]; outcomes: Outcomes; canDelete: boolean }) {
  const headers = ['URL', 'Status', 'Events', 'Created', 'Delivered (24 h)', ...(canDelete ? ['Actions'] : [])];
  return (
    <Table caption="Webhook subscriptions" headers={headers} empty="No webhook subscriptions yet.">
      {webhooks.map((webhook) => (
        <tr>
          <td class="webhook-url">
            <a href={webhookHref(webhook.id)}>
              <Url href={webhook.url} />
            </a>
          </td>
          <td>
            <SubscriptionStatus webhook={webhook} />
          </td>
          <td>{webhook.events.join(', ')}</td>
          <td>
            <Time iso={webhook.created_at} />
          </td>
          <td>{deliveredShare(outcomes.get(webhook.id))}</td>
          {canDelete ? (
            <td>
              <a href={`${webhookHref(webhook.id)}/delete`}>Delete</a>
            </td>
          ) : null}
        </tr>
      ))}
    </Table>
  );
}

function AddSubscriptionForm({ form, errors: formErrors, csrf }: { form: CreateFormValues; errors: readonly FormError[]; csrf: string }) {
  return (
    <section aria-labelledby="add-subscription-title" class="panel">
      <h2 id="add-subscription-title">Add subscription</h2>
      <form method="post" action={HERE}>
        <CsrfField token={csrf} />
        <Field
          id="url"
          type="url"
          label="Endpoint URL"
          value={form.url}
          error={errorFor(formErrors, 'url')}
          hint="An https:// address on the public internet, without user name or password."
          maxLength={2048}
          autocomplete="off"
        />
        <EventsGroup chosen={form.events} error={errorFor(formErrors, 'events')} />
        <Field
          id="secret"
          label="Signing secret (optional)"
          value={form.secret}
          error={errorFor(formErrors, 'secret')}
          hint="16 to 256 printable ASCII characters. Leave it empty to have one generated; either way it is shown once."
          maxLength={256}
          autocomplete="off"
        />
        <DeliveryControlFields values={form.control} error={errorFor(formErrors, 'rate_limit')} />
        <button type="submit">Create subscription</button>
      </form>
    </section>
  );
}

/** The only place a subscription's secret ever appears: the page after the POST that created it, once. */
function NewSubscription({ created }: { created: { id: string; url: string; secret: string } }) {
  return (
    <section aria-labelledby="new-subscription-title" class="panel">
      <h2 id="new-subscription-title">Your new subscription</h2>
      <p>
        Events go to <a href={webhookHref(created.id)} class="webhook-url">
          <Url href={created.url} />
        </a>, signed with the secret below. Copy it now and
        configure your receiver with it: it is shown only this once.
      </p>
      <SecretField value={created.secret} />
    </section>
  );
}

interface WebhooksViewProps {
  page: PageContext;
  list: PageResult<Webhook>;
  outcomes: Outcomes;
  cursor?: string | undefined;
  form?: CreateFormValues;
  errors?: readonly FormError[];
}

function WebhooksView({ page, list, outcomes, cursor, form = EMPTY_FORM, errors: formErrors = [] }: WebhooksViewProps) {
  const secret = flashSecret(page.viewer.flash, 'webhook_secret');
  const created = secret ? { id: secret.id, url: secret.label ?? '', secret: secret.value } : null;
  // Hiding what a role cannot use; the services refuse it anyway.
  const canCreate = canChange(page.actor, 'webhooks', 'create');
  const canDelete = can(page.actor, 'webhooks', 'delete');
  return (
    <Layout title="Webhooks" viewer={page.viewer} csrf={page.csrf} current={HERE} errors={formErrors}>
      {created ? <NewSubscription created={created} /> : null}
      <p>
        Each subscription receives the events it lists, signed with its secret. Delivered (24 h) is the share of delivery attempts in the last
        24 hours that the endpoint answered with a 2xx status.
      </p>
      <WebhooksTable webhooks={list.items} outcomes={outcomes} canDelete={canDelete} />
      {cursor || list.nextCursor ? (
        <nav class="pager" aria-label="Pages of webhook subscriptions">
          {cursor ? <a href={HERE}>Newest</a> : null}
          {list.nextCursor ? <a href={`${HERE}?cursor=${encodeURIComponent(list.nextCursor)}`}>Older</a> : null}
        </nav>
      ) : null}
      {!can(page.actor, 'webhooks', 'create') ? (
        <p class="muted">Admins and owners add and delete subscriptions.</p>
      ) : !canCreate ? null : created ? (
        // Not the form again: "Signing secret" then names exactly one field on this page.
        <p>
          <a href={HERE}>Add another subscription</a>
        </p>
      ) : (
        <AddSubscriptionForm form={form} errors={formErrors} csrf={page.csrf} />
      )}
    </Layout>
  );
}

const FIELD_LABELS = { url: 'Endpoint URL', events: 'Events', secret: 'Signing secret', rate_limit: RATE_LIMIT_LABEL, ordering: 'Deliver in order' } as const;
type FormField = keyof typeof FIELD_LABELS;

function fieldOf(name: string): FormField | null {
  if (name === 'url' || name === 'secret' || name === 'rate_limit' || name === 'ordering') return name;
  // `events.1`: one of the names posted is not an event (a forged form); the group gets the error.
  if (name === 'events' || name.startsWith('events.')) return 'events';
  return null;
}

/** The API's refusal (schema or service) as the form's errors: one per field, in the API's words where they read well. */
function createErrors(error: DomainError): FormError[] {
  const details = error.details ?? [];
  if (details.length === 0) return [{ field: null, message: error.message.charAt(0).toUpperCase() + error.message.slice(1) }];
  const result: FormError[] = [];
  for (const d of details) {
    const field = fieldOf(d.field);
    if (field && result.some((e) => e.field === field)) continue;
    let message = `${field ? FIELD_LABELS[field] : d.field} ${d.message}`;
    if (field === 'url' && d.message.startsWith('must be at least 1 ')) message = 'Enter the endpoint URL';
    if (field === 'events' && d.message.startsWith('must have at least 1 ')) message = 'Choose at least one event';
    if (field === 'secret' && d.message === 'has an invalid format') message = 'Signing secret must contain printable ASCII characters only';
    if (field === 'rate_limit') message = RATE_LIMIT_MESSAGE;
    result.push({ field, message });
  }
  return result;
}

/** DASHBOARD 3 and 6: every member reads the subscriptions; admins and owners create and delete them, by the API's rules. */
export const webhooksPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const webhooks = services.webhooks;

  async function listing(page: PageContext, cursor?: string): Promise<{ list: PageResult<Webhook>; outcomes: Outcomes }> {
    const [list, outcomes] = await Promise.all([webhooks.list(page.actor, { limit: PAGE_SIZE, cursor }), services.deliveryStats.perWebhook(page.actor)]);
    return { list, outcomes };
  }

  app.get('/webhooks', { schema: pageSchema(ListQuery) }, async (request, reply) => {
    const page = pageContext(request);
    const { cursor } = request.query;
    try {
      return sendPage(reply, <WebhooksView page={page} cursor={cursor} {...await listing(page, cursor)} />);
    } catch (error) {
      // A stale or hand-edited cursor: the first page, with a sentence a person can act on.
      pageRefusal(reply, error, [400]);
      const errors: FormError[] = [{ field: null, message: 'This page link is no longer valid. Start again from the newest subscriptions.' }];
      return sendPage(reply, <WebhooksView page={page} errors={errors} {...await listing(page)} />, 400);
    }
  });

  // The secret reaches the list once, through the session's one-time slot: a reload never shows it again.
  app.post('/webhooks', { schema: { hide: true, body: CreateForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    // A role without the form gets the error page whatever the form holds, as the API answers 403 before 400.
    authorizeChange(page.actor, 'webhooks', 'create');
    const { url = '', events, secret = '' } = request.body;
    const form: CreateFormValues = { url, events: events === undefined ? [] : Array.isArray(events) ? events : [events], secret, control: controlValues(request.body) };
    let created: CreatedWebhook;
    try {
      // An empty secret field means "generate one", as an absent `secret` does in the API.
      const input = validateAs<CreateWebhookInput>(CreateWebhookBody, { url, events: [...form.events], ...(secret === '' ? {} : { secret }) });
      created = await webhooks.create(page.actor, { ...input, ...controlInput(form.control) });
    } catch (error) {
      const err = pageRefusal(reply, error, [400]);
      return sendPage(reply, <WebhooksView page={page} form={form} errors={createErrors(err)} {...await listing(page)} />, err.status);
    }
    return seeOther(reply, HERE, {
      notice: `Subscription to ${created.url} created.`,
      secret: { kind: 'webhook_secret', id: created.id, label: created.url, value: created.secret },
    });
  });

  app.get('/webhooks/:id/delete', { schema: { ...pageSchema(), params: WebhookParams } }, async (request, reply) => {
    const page = pageContext(request);
    // The page of an action the role cannot take answers 403, as the action itself would.
    authorize(page.actor, 'webhooks', 'delete');
    const webhook = await webhooks.get(page.actor, pathId(request.params.id, 'webhook'));
    return sendPage(
      reply,
      <Layout title="Delete webhook subscription" viewer={page.viewer} csrf={page.csrf} current={HERE}>
        <p class="lead">
          Delete the subscription to <code class="webhook-url">
            <Url href={webhook.url} />
          </code> ({webhook.events.join(', ')})?
        </p>
        <p>It receives no events from now on, and its deliveries that have not gone out yet are cancelled. This cannot be undone.</p>
        <ConfirmActions action={`${webhookHref(webhook.id)}/delete`} csrf={page.csrf} label="Delete subscription" cancelHref={webhookHref(webhook.id)} cancelLabel="Keep the subscription" />
      </Layout>,
    );
  });

  // The service decides: 403 for a role that may not delete, 404 for an id not of this organisation.
  app.post('/webhooks/:id/delete', { schema: { hide: true, params: WebhookParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const webhook = await webhooks.remove(page.actor, pathId(request.params.id, 'webhook'));
    return seeOther(reply, HERE, { notice: `Subscription to ${webhook.url} deleted. Its deliveries that had not gone out yet were cancelled.` });
  });
};
