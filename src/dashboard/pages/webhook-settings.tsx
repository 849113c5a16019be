import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { DomainError } from '../../errors.js';
import type { EventType } from '../../schemas/events.js';
import { type UpdateWebhookInput } from '../../services/webhooks/webhooks-service.js';
import { type Webhook, DEFAULT_PREVIOUS_EXPIRES_IN, UpdateWebhookBody } from '../../schemas/webhooks.js';
import type { AppDeps } from '../../http/app-deps.js';
import { authorizeChange, pageContext, pageRefusal, pathId, seeOther, sendPage, type PageContext } from '../context.js';
import { sentence } from '../../lib/text.js';
import { formErrors, validateAs } from '../form-validation.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { CsrfField, errorFor, Field, Select, Time, type FormError } from '../views/components.js';
import { flashSecret } from '../flash.js';
import { deliveryHref, subscriptionHref, testNotice, WEBHOOKS } from '../views/delivery-views.js';
import { DeliveryControlFields, EventsGroup, SecretField } from '../views/webhook-views.js';
import { controlInput, controlValues, controlValuesOf, deliveryControlFields, RATE_LIMIT_LABEL, RATE_LIMIT_MESSAGE, type DeliveryControlValues } from '../delivery-control-form.js';
import { Layout } from '../views/layout.js';

const WebhookParams = Type.Object({ id: Type.String({ maxLength: 128 }) });

const EditForm = FormBody({
  url: FormText(4096),
  events: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32 })])),
  ...deliveryControlFields,
});
const RotateForm = FormBody({ previous_expires_in: FormText(16) });
const TestForm = FormBody({ event: FormText(64) });

/** "Keep the old secret valid for": the API's 0 to 7 days, in the steps people choose. */
const WINDOWS = [
  { value: '0', label: 'Stop it now' },
  { value: '3600', label: '1 hour' },
  { value: String(DEFAULT_PREVIOUS_EXPIRES_IN), label: '24 hours' },
  { value: '259200', label: '3 days' },
  { value: '604800', label: '7 days' },
];

const EDIT_LABELS = { url: 'Endpoint URL', events: 'Events', rate_limit: RATE_LIMIT_LABEL, ordering: 'Deliver in order' };

const listOf = (value: string | string[] | undefined) => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/**
 * The subscription's settings (DASHBOARD 6): "Edit subscription", "Rotate secret" (a confirmation step; the new
 * secret shown once), "Send test event" (then the attempt's result), and "Enable subscription". Admins and owners;
 * the same services as the API decide every rule.
 */
export const webhookSettingsPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services, config }) => {
  const webhooks = services.webhooks;

  async function changeable(page: PageContext, id: string): Promise<Webhook> {
    authorizeChange(page.actor, 'webhooks', 'update');
    return webhooks.get(page.actor, pathId(id, 'webhook'));
  }

  app.get('/webhooks/:id/edit', { schema: { ...pageSchema(), params: WebhookParams } }, async (request, reply) => {
    const page = pageContext(request);
    const webhook = await changeable(page, request.params.id);
    return sendPage(reply, <EditView page={page} webhook={webhook} url={webhook.url} events={webhook.events} control={controlValuesOf(webhook)} />);
  });

  app.post('/webhooks/:id/edit', { schema: { hide: true, params: WebhookParams, body: EditForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const webhook = await changeable(page, request.params.id);
    const url = request.body.url ?? '';
    const events = listOf(request.body.events);
    const control = controlValues(request.body);
    try {
      const input = validateAs<UpdateWebhookInput>(UpdateWebhookBody, { url, events });
      await webhooks.update(page.actor, webhook.id, { ...input, ...controlInput(control) });
    } catch (error) {
      const refusal = pageRefusal(reply, error, [400]);
      return sendPage(reply, <EditView page={page} webhook={webhook} url={url} events={events} control={control} errors={editErrors(refusal)} />, 400);
    }
    return seeOther(reply, subscriptionHref(webhook.id), { notice: `Subscription to ${url} saved.` });
  });

  app.get('/webhooks/:id/rotate-secret', { schema: { ...pageSchema(), params: WebhookParams } }, async (request, reply) => {
    const page = pageContext(request);
    const webhook = await changeable(page, request.params.id);
    return sendPage(reply, <RotateView page={page} webhook={webhook} window={String(DEFAULT_PREVIOUS_EXPIRES_IN)} />);
  });

  // The new secret reaches the next page once, through the session's one-time slot (no-store): a reload
  // shows neither it nor a second rotation.
  app.post('/webhooks/:id/rotate-secret', { schema: { hide: true, params: WebhookParams, body: RotateForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const webhook = await changeable(page, request.params.id);
    const window = request.body.previous_expires_in ?? '';
    if (!WINDOWS.some((w) => w.value === window)) {
      const problems: FormError[] = [{ field: 'previous_expires_in', message: 'Choose how long the old secret stays valid' }];
      return sendPage(reply, <RotateView page={page} webhook={webhook} window={String(DEFAULT_PREVIOUS_EXPIRES_IN)} errors={problems} />, 400);
    }
    const rotated = await webhooks.rotateSecret(page.actor, webhook.id, { previous_expires_in: Number(window) });
    const previousExpiresAt = window === '0' ? null : Date.parse(rotated.previous_expires_at);
    return seeOther(reply, `${subscriptionHref(webhook.id)}/rotated`, {
      notice: 'Signing secret rotated.',
      secret: { kind: 'rotated_secret', id: webhook.id, label: webhook.url, value: rotated.secret, previousExpiresAt },
    });
  });

  app.get('/webhooks/:id/rotated', { schema: { ...pageSchema(), params: WebhookParams } }, async (request, reply) => {
    const page = pageContext(request);
    const webhook = await webhooks.get(page.actor, pathId(request.params.id, 'webhook'));
    const secret = flashSecret(page.viewer.flash, 'rotated_secret', webhook.id);
    // Shown once: a reload (or a shared link) goes to the subscription, the secret is not kept anywhere.
    if (!secret) return seeOther(reply, subscriptionHref(webhook.id));
    return sendPage(reply, <RotatedView page={page} webhook={webhook} secret={secret.value} previousExpiresAt={secret.previousExpiresAt ?? null} />);
  });

  app.get('/webhooks/:id/test', { schema: { ...pageSchema(), params: WebhookParams } }, async (request, reply) => {
    const page = pageContext(request);
    const webhook = await changeable(page, request.params.id);
    return sendPage(reply, <TestView page={page} webhook={webhook} />);
  });

  app.post('/webhooks/:id/test', { schema: { hide: true, params: WebhookParams, body: TestForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const webhook = await changeable(page, request.params.id);
    const event = request.body.event ?? '';
    if (!(webhook.events as string[]).includes(event)) {
      return sendPage(reply, <TestView page={page} webhook={webhook} errors={[{ field: 'event', message: 'Choose one of the events of this subscription' }]} />, 400);
    }
    let deliveryId: string;
    try {
      deliveryId = (await webhooks.sendTest(page.actor, webhook.id, { event: event as EventType })).delivery_id;
    } catch (error) {
      // A subscription disabled meanwhile (409): said on the form's page.
      const refusal = pageRefusal(reply, error, [409]);
      return sendPage(reply, <TestView page={page} webhook={webhook} errors={[{ field: null, message: sentence(refusal.message) }]} />, 409);
    }
    // The attempt's result is what the person came for: wait for it (at most the delivery deadline and a
    // little), then show the delivery; without a worker running it is shown as pending.
    const deadline = Date.now() + config.webhookTimeoutMs + 3000;
    let delivery = await services.deliveries.get(page.actor, webhook.id, deliveryId);
    while (delivery.status === 'pending' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      delivery = await services.deliveries.get(page.actor, webhook.id, deliveryId);
    }
    return seeOther(reply, deliveryHref(webhook.id, deliveryId), { notice: testNotice(delivery) });
  });

  app.post('/webhooks/:id/enable', { schema: { hide: true, params: WebhookParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const webhook = await changeable(page, request.params.id);
    await webhooks.enable(page.actor, webhook.id);
    return seeOther(reply, subscriptionHref(webhook.id), {
      notice: `Subscription to ${webhook.url} enabled: deliveries go out again. Replay failed deliveries to send what it missed while disabled.`,
    });
  });
};

function editErrors(error: DomainError): FormError[] {
  return formErrors(error, EDIT_LABELS).map((e) => {
    const field = e.field?.startsWith('events') ? 'events' : e.field;
    if (field === 'events' && /at least 1/.test(e.message)) return { field, message: 'Choose at least one event' };
    if (field === null && /at least 1 propert/.test(e.message)) return { field: 'url', message: 'Enter the endpoint URL' };
    if (field === 'rate_limit') return { field, message: RATE_LIMIT_MESSAGE };
    return { ...e, field };
  });
}

function Back({ webhook }: { webhook: Webhook }) {
  return <a href={subscriptionHref(webhook.id)}>Cancel</a>;
}

function EditView({
  page,
  webhook,
  url,
  events,
  control,
  errors: problems = [],
}: {
  page: PageContext;
  webhook: Webhook;
  url: string;
  events: readonly string[];
  control: DeliveryControlValues;
  errors?: FormError[];
}) {
  return (
    <Layout title="Edit subscription" viewer={page.viewer} csrf={page.csrf} current={WEBHOOKS} errors={problems}>
      <p class="lead">
        Subscription <code class="webhook-url">{webhook.url}</code>
      </p>
      <p>Deliveries waiting for a retry go to the new URL too. The signing secret and the delivery history stay as they are.</p>
      <form method="post" action={`${subscriptionHref(webhook.id)}/edit`}>
        <CsrfField token={page.csrf} />
        <Field id="url" type="url" label="Endpoint URL" value={url} error={errorFor(problems, 'url')} hint="An https:// address on the public internet, without user name or password." maxLength={2048} autocomplete="off" />
        <EventsGroup chosen={events} error={errorFor(problems, 'events')} />
        <DeliveryControlFields values={control} error={errorFor(problems, 'rate_limit')} />
        <div class="actions">
          <button type="submit">Save subscription</button>
          <Back webhook={webhook} />
        </div>
      </form>
    </Layout>
  );
}

function RotateView({ page, webhook, window, errors: problems = [] }: { page: PageContext; webhook: Webhook; window: string; errors?: FormError[] }) {
  return (
    <Layout title="Rotate signing secret" viewer={page.viewer} csrf={page.csrf} current={WEBHOOKS} errors={problems}>
      <p class="lead">
        Rotate the signing secret of <code class="webhook-url">{webhook.url}</code>?
      </p>
      <p>
        A new secret signs every delivery from now on. The old one keeps signing beside it for the time you choose (a second entry in{' '}
        <code>webhook-signature</code>, and <code>X-Service-Signature-Previous</code>), so your receiver can switch to the new secret at any
        moment in that window. The new secret is shown once, on the next page.
      </p>
      <form method="post" action={`${subscriptionHref(webhook.id)}/rotate-secret`}>
        <CsrfField token={page.csrf} />
        <Select id="previous_expires_in" label="Keep the old secret valid for" options={WINDOWS} value={window} error={errorFor(problems, 'previous_expires_in')} />
        <div class="actions">
          <button type="submit">Rotate secret</button>
          <Back webhook={webhook} />
        </div>
      </form>
    </Layout>
  );
}

function RotatedView({ page, webhook, secret, previousExpiresAt }: { page: PageContext; webhook: Webhook; secret: string; previousExpiresAt: number | null }) {
  return (
    <Layout title="Signing secret rotated" viewer={page.viewer} csrf={page.csrf} current={WEBHOOKS}>
      <section aria-labelledby="new-secret-title" class="panel">
        <h2 id="new-secret-title">Your new signing secret</h2>
        <p>
          Deliveries to <code class="webhook-url">{webhook.url}</code> are signed with the secret below from now on. Copy it now and configure your
          receiver with it: it is shown only this once.
        </p>
        <SecretField value={secret} />
        <p>
          {previousExpiresAt === null ? (
            <>The old secret stopped signing at once.</>
          ) : (
            <>
              The old secret keeps signing beside it until <Time iso={new Date(previousExpiresAt).toISOString()} absolute />, then stops.
            </>
          )}
        </p>
      </section>
      <p>
        <a href={subscriptionHref(webhook.id)}>Back to the subscription</a>
      </p>
    </Layout>
  );
}

function TestView({ page, webhook, errors: problems = [] }: { page: PageContext; webhook: Webhook; errors?: FormError[] }) {
  return (
    <Layout title="Send test event" viewer={page.viewer} csrf={page.csrf} current={WEBHOOKS} errors={problems}>
      <p class="lead">
        Send a test event to <code class="webhook-url">{webhook.url}</code>
      </p>
      <p>
        One delivery with example data and the header <code>X-Service-Test: true</code>, signed like any other. It is attempted once, never
        retried, and does not count towards the subscription's health. The next page shows how the endpoint answered.
      </p>
      <form method="post" action={`${subscriptionHref(webhook.id)}/test`}>
        <CsrfField token={page.csrf} />
        <Select id="event" label="Event" options={webhook.events.map((e) => ({ value: e, label: e }))} value={webhook.events[0]} error={errorFor(problems, 'event')} />
        <div class="actions">
          <button type="submit">Send test event</button>
          <Back webhook={webhook} />
        </div>
      </form>
    </Layout>
  );
}
