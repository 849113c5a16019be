import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BillingProviderError } from '../../billing/stripe-billing.js';
import { DomainError } from '../../errors.js';
import { mayChangeSubscription } from '../../services/lifecycle/lifecycle-service.js';
import type { AppDeps } from '../../http/app-deps.js';
import { pageContext, sendPage } from '../context.js';
import { FormBody, HtmlPage, htmlResponses } from '../schemas.js';
import { BILLING, BillingView } from '../views/billing-views.js';

/**
 * "Manage billing" on the Billing page (DASHBOARD 10, with Stripe configured): sends an owner to Stripe's
 * customer portal for the organisation's customer, and back to the Billing page afterwards. Allowed while
 * read-only, since the portal is where a cancelled organisation pays again. Without Stripe the path does
 * not exist (the dashboard's 404 page).
 */
export const billingPortalPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { stripe, services, config }) => {
  if (!stripe) return;
  const returnUrl = `${config.publicBaseUrl}${BILLING}`;

  app.post(
    '/billing/portal',
    { schema: { hide: true, body: FormBody({}), response: { ...htmlResponses, 502: HtmlPage('The Billing page with what went wrong at Stripe.') } } },
    async (request, reply) => {
      const page = pageContext(request);
      let refusal: DomainError;
      try {
        // Stripe's own page, on Stripe's origin: not a dashboard path, so not seeOther.
        return reply.code(303).header('location', await stripe.portalUrl(page.actor, returnUrl)).send();
      } catch (error) {
        // 403 goes to the error page; an organisation without a customer (409) or Stripe failing (502) is
        // explained on the Billing page itself.
        if (!(error instanceof DomainError) || (error.status !== 409 && !(error instanceof BillingProviderError))) throw error;
        if (error instanceof BillingProviderError) request.log.warn({ stripe: error.stripe }, 'Stripe refused to open a billing portal session');
        refusal = error;
      }
      const organization = await services.lifecycle.show(page.actor);
      return sendPage(
        reply,
        <BillingView
          page={page}
          organization={organization}
          mayChange={mayChangeSubscription(page.actor)}
          portal={organization.billing === 'stripe'}
          errors={[{ field: null, message: refusal.message }]}
        />,
        refusal.status,
      );
    },
  );
};
