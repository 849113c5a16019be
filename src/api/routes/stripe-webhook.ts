import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { StripeBilling } from '../../billing/stripe-billing.js';
import type { AppDeps } from '../../http/app-deps.js';
import { ErrorResponse } from '../../schemas/common.js';

const WebhookReceipt = Type.Object(
  {
    received: Type.Literal(true),
    duplicate: Type.Boolean({ description: 'True when this event id was received before: nothing was applied again.' }),
    outcome: Type.Optional(Type.String({ description: 'What became of the event: applied, or why it was ignored.' })),
  },
  { additionalProperties: false },
);

const BODY_LIMIT = 1024 * 1024;

/**
 * `POST /billing/stripe/webhook` (DASHBOARD 10), registered only when Stripe is configured. Stripe signs the
 * exact bytes it sends, so this scope takes the body raw instead of through the API's JSON parser; there is
 * no API key (the signature is the credential), hence no `config.auth` and no per-key rate limit. Hidden
 * from the OpenAPI document: it is Stripe's door, not the API's (docs/lifecycle.md describes it).
 */
export const stripeWebhookRoutes: FastifyPluginAsyncTypebox<AppDeps & { stripe: StripeBilling }> = async (app, { stripe }) => {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) => done(null, body));

  app.post('/billing/stripe/webhook', {
    schema: {
      hide: true,
      response: { 200: WebhookReceipt, 400: ErrorResponse, 409: ErrorResponse, 413: ErrorResponse, 415: ErrorResponse },
    },
    handler: async (request) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      return stripe.handleWebhook(raw, request.headers['stripe-signature']);
    },
  });
};
