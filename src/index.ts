/**
 * The package entry (`workspace-service`): what a webhook receiver or an embedding program needs.
 * Receivers import `verifySignature` to check `X-Service-Signature` over the raw body.
 */
export { verifySignature, signBody, standardSignature, signatureHeaders, type SigningSecrets } from './delivery/signing.js';
export { USER_AGENT, RESPONSE_BODY_LIMIT } from './delivery/sender.js';
export { EVENT_TYPES, type EventType } from './schemas/events.js';
export type { Delivery, DeliveryAttempt, DeliveryDetail } from './schemas/deliveries.js';
export type { Webhook, CreatedWebhook } from './schemas/webhooks.js';
export type { Project } from './schemas/projects.js';
export { loadConfig, type Config } from './config.js';
export { createContainer, type Container } from './container.js';
export { startDeliveryWorker, type RunningWorker } from './worker/index.js';

/** Header names of a webhook delivery (CONTRACT section 7), lower-cased as Node presents them. */
export const WEBHOOK_HEADERS = {
  signature: 'x-service-signature',
  event: 'x-service-event',
  eventId: 'x-service-event-id',
  deliveryId: 'x-service-delivery-id',
  attempt: 'x-service-delivery-attempt',
} as const;
