import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { toIso, systemClock } from '../../lib/time.js';
import { GRACE_PERIOD_MS, mayChangeSubscription, requireOwner, type OrganizationLifecycle } from '../../services/lifecycle/lifecycle-service.js';
import type { AppDeps } from '../../http/app-deps.js';
import { pageContext, pageRefusal, seeOther, sendPage, type PageContext } from '../context.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { BILLING, BillingView, CancelView, CONFIRM_FIELD } from '../views/billing-views.js';
import { sentence } from '../../lib/text.js';

const CancelForm = FormBody({ confirm_name: FormText(1024) });

/**
 * DASHBOARD 3 and 10: /dashboard/billing. Every member sees the plan and the workspace's state; only an
 * owner cancels (typing the organisation's name on a confirmation step) and resumes. Both call the
 * lifecycle service with the session's actor, which holds the owner rule, the audit rows and the e-mails.
 */
export const billingPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services, stripe, clock = systemClock }) => {
  const lifecycle = services.lifecycle;

  /** Stripe's customer portal is offered only where Stripe is configured and this organisation is billed through it. */
  const portalFor = (org: OrganizationLifecycle) => Boolean(stripe) && org.billing === 'stripe';

  async function billingPage(reply: FastifyReply, page: PageContext, options: { error?: unknown } = {}) {
    const organization = await lifecycle.show(page.actor);
    // Refusals the page explains (a conflict: already cancelled, deletion begun); others go to the error page.
    const refusal = options.error === undefined ? null : pageRefusal(reply, options.error, [409]);
    return sendPage(
      reply,
      <BillingView
        page={page}
        organization={organization}
        mayChange={mayChangeSubscription(page.actor)}
        portal={portalFor(organization)}
        errors={refusal ? [{ field: null, message: sentence(refusal.message) }] : []}
      />,
      refusal?.status ?? 200,
    );
  }

  app.get('/billing', { schema: pageSchema() }, async (request, reply) => billingPage(reply, pageContext(request)));

  app.get('/billing/cancel', { schema: pageSchema() }, async (request, reply) => {
    const page = pageContext(request);
    // The page of an action the role cannot take answers 403, as the action itself would.
    requireOwner(page.actor);
    const organization = await lifecycle.show(page.actor);
    // Nothing to confirm once cancelled: the billing page says what state the workspace is in.
    if (organization.state !== 'active') return seeOther(reply, BILLING);
    return sendPage(reply, <CancelView page={page} organization={organization} deletionAt={toIso(clock.now() + GRACE_PERIOD_MS)} />);
  });

  app.post('/billing/cancel', { schema: { hide: true, body: CancelForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    // Before the form is read: a role that may not cancel gets 403 whatever it typed, as the API orders them.
    requireOwner(page.actor);
    const organization = await lifecycle.show(page.actor);
    const typed = request.body.confirm_name ?? '';
    // Typing the name is the confirmation: anything else cancels nothing. A workspace no longer active has
    // nothing to confirm; the service's conflict says why.
    if (organization.state === 'active' && typed !== organization.name) {
      const message = typed === '' ? "Type the organisation's name to cancel the subscription." : "Organisation name does not match the organisation's name.";
      const errors = [{ field: CONFIRM_FIELD, message }];
      const deletionAt = toIso(clock.now() + GRACE_PERIOD_MS);
      return sendPage(reply, <CancelView page={page} organization={organization} deletionAt={deletionAt} typed={typed} errors={errors} />, 400);
    }
    try {
      await lifecycle.cancel(page.actor);
    } catch (error) {
      return billingPage(reply, page, { error });
    }
    return seeOther(reply, BILLING, { notice: 'The subscription was cancelled. The workspace is read-only until it is deleted or the subscription is resumed.' });
  });

  app.post('/billing/resume', { schema: { hide: true, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    try {
      await lifecycle.resume(page.actor);
    } catch (error) {
      return billingPage(reply, page, { error });
    }
    return seeOther(reply, BILLING, { notice: 'The subscription was resumed. The workspace is active again.' });
  });
};
