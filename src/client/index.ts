/**
 * `workspace-service/client`: a typed client of the Workspace Service API, for Node 22.14+, browsers and edge
 * runtimes (its only dependency is openapi-fetch), and `verifyWebhook` for receivers of its webhooks.
 */
export {
  createWorkspaceClient,
  type DataMethod,
  type ListItem,
  type ListPath,
  type PaginateMethod,
  type PathsWith,
  type RawWorkspaceClient,
  type ResponseData,
  type WorkspaceClient,
  type WorkspaceClientOptions,
} from './client.js';
export { isWorkspaceApiError, WorkspaceApiError, type WorkspaceErrorBody, type WorkspaceErrorCode, type WorkspaceErrorDetail } from './errors.js';
export type { RetryOptions } from './retry.js';
/** The generated types of the OpenAPI document (docs/openapi.json). */
export type { components, operations, paths, webhooks } from './openapi.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  WEBHOOK_EVENT_TYPES,
  type WebhookEvent,
  type WebhookEventOf,
  type WebhookEventType,
  type WebhookHeaders,
  type WebhookVerificationReason,
  type VerifyWebhookOptions,
} from './verify-webhook.js';
