import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * Table types shared by both dialects. Times are epoch milliseconds (BIGINT), JSON is stored as text,
 * and every row carries `org_id`. `seq` is a per-table increasing integer: it gives lists a strict
 * creation order (even within one millisecond) and is the keyset for cursors.
 */

/** DASHBOARD 10: `read_only` once cancelled; `deleting` from the moment the deletion job begins. */
export type OrgState = 'active' | 'read_only' | 'deleting';

export interface OrganizationsTable {
  seq: Generated<number>;
  id: string;
  name: string;
  created_at: number;
  updated_at: number;
  state: ColumnType<OrgState, OrgState | undefined, OrgState>;
  cancelled_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** Cancellation + 30 days: when the deletion job removes the organisation. */
  deletion_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** When the "7 days left" and "1 day left" e-mails went out (each at most once per cancellation). */
  reminded_7d_at: ColumnType<number | null, number | null | undefined, number | null>;
  reminded_1d_at: ColumnType<number | null, number | null | undefined, number | null>;
  deletion_started_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** The deletion job's lease, like the workers' other work. */
  lease_owner: ColumnType<string | null, string | null | undefined, string | null>;
  lease_expires_at: ColumnType<number | null, number | null | undefined, number | null>;
  stripe_customer_id: ColumnType<string | null, string | null | undefined, string | null>;
  stripe_subscription_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** `created` (ms) of the last Stripe event applied: older events are ignored. */
  stripe_event_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** Since when the owner requires two-step verification of every member (DASHBOARD 11), or null. */
  two_step_required_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** The role of a provisioned member in no mapped group (CONTRACT 16): viewer or member. */
  scim_default_role: ColumnType<ScimDefaultRole, ScimDefaultRole | undefined, ScimDefaultRole>;
  /** The owner's ceiling on API key lifetimes, in days; null: none (CONTRACT 16). */
  max_key_lifetime_days: ColumnType<number | null, number | null | undefined, number | null>;
  /** 1: members and viewers may connect apps through OAuth; 0: only admins and owners (CONTRACT 17). */
  members_may_connect_apps: ColumnType<number, number | undefined, number>;
  /** 1: MCP offers the tools that delete (CONTRACT 17); off by default. */
  agents_may_delete: ColumnType<number, number | undefined, number>;
}

export type ScimDefaultRole = 'viewer' | 'member';
/** What a group can map to: never owner (CONTRACT 16). */
export type ScimGroupRole = 'viewer' | 'member' | 'admin';

/** What remains of a deleted organisation: its id and its dates, nothing else. */
export interface OrganizationTombstonesTable {
  id: string;
  created_at: number;
  cancelled_at: number | null;
  deletion_at: number | null;
  deleted_at: number;
}

/** Stripe events seen, by id: a replayed event is acknowledged and not applied again. */
export interface StripeEventsTable {
  id: string;
  org_id: string | null;
  type: string;
  /** The event's `created`, in ms. */
  created: number;
  received_at: number;
  /** applied, ignored_stale, ignored_unknown_org, ignored_type, ignored_no_change */
  outcome: string;
}

export type ExportStatus = 'queued' | 'running' | 'ready' | 'failed';

export interface ExportsTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  status: ExportStatus;
  requested_by: string | null;
  /** The audit label of who asked (an e-mail, or cli). */
  requested_by_label: string;
  format_version: number;
  size_bytes: number | null;
  /** JSON object: rows per collection. */
  counts: string | null;
  error: string | null;
  created_at: number;
  started_at: number | null;
  ready_at: number | null;
  /** Ready + 7 days, never past the organisation's deletion date. */
  expires_at: number | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  updated_at: number;
}

/** An export's ZIP in order: any instance streams the download from here. */
export interface ExportChunksTable {
  export_id: string;
  org_id: string;
  position: number;
  data: Uint8Array;
}

/**
 * SQLite only (migration 008): one row whose `version` a trigger bumps on every change that affects
 * authentication; PostgreSQL announces the same changes with NOTIFY instead and has no such table.
 */
export interface AuthChangesTable {
  id: number;
  version: number;
}

export type Role = 'owner' | 'admin' | 'member' | 'viewer';
/** `suspended`: deprovisioned by the identity provider (SCIM `active: false`, CONTRACT 16). */
export type UserStatus = 'invited' | 'active' | 'suspended';

export interface UsersTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  email: string;
  email_normalized: string;
  name: string | null;
  role: Role;
  status: UserStatus;
  password_hash: string | null;
  created_at: number;
  updated_at: number;
  /** What the identity provider calls this person (SCIM `externalId`). */
  external_id: ColumnType<string | null, string | null | undefined, string | null>;
  given_name: ColumnType<string | null, string | null | undefined, string | null>;
  family_name: ColumnType<string | null, string | null | undefined, string | null>;
  formatted_name: ColumnType<string | null, string | null | undefined, string | null>;
  /** Set when SCIM created or claimed the member: from then on the provider manages their role. */
  provisioned_at: ColumnType<number | null, number | null | undefined, number | null>;
}

export type ProjectStatus = 'active' | 'archived' | 'draft';

/** `organization`: every member sees the project; `private`: its collaborators, admins and owners only (CONTRACT 15). */
export type ProjectVisibility = 'organization' | 'private';

/** A collaborator's role on one project (CONTRACT 15), lowest first. */
export type ProjectRole = 'viewer' | 'editor' | 'manager';

export interface ProjectsTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  status: ProjectStatus;
  visibility: Generated<ProjectVisibility>;
  created_at: number;
  updated_at: number;
}

export interface ProjectCollaboratorsTable {
  seq: Generated<number>;
  org_id: string;
  project_id: string;
  user_id: string;
  role: ProjectRole;
  created_at: number;
  updated_at: number;
}

export type StepKind = 'task' | 'approval' | 'wait';

/** A workflow's step as stored (JSON in `workflows.steps`); a run copies these when it starts. */
export interface WorkflowStepDefinition {
  id: string;
  kind: StepKind;
  /** Task and Approval: what the task is called. Wait: an optional label. */
  title: string | null;
  /** Task: the assignee; Approval: the approver. Null leaves the task unassigned. */
  assignee_id: string | null;
  /** Task: the task is due this long after the step starts. */
  due_in_ms: number | null;
  /** Wait: how long the step waits. */
  duration_ms: number | null;
}

export interface WorkflowsTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  project_id: string;
  name: string;
  description: string | null;
  /** JSON array of WorkflowStepDefinition, in order. */
  steps: string;
  /** Bumped on every edit; a run records the version it copied. */
  version: number;
  created_at: number;
  updated_at: number;
}

export type TaskStatus = 'open' | 'done' | 'cancelled';
export type TaskKind = 'todo' | 'approval';
export type TaskDecision = 'approved' | 'rejected';

export interface TasksTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  project_id: string;
  workflow_id: string | null;
  run_id: string | null;
  /** The run's step (0-based position) this task belongs to. */
  run_step: number | null;
  title: string;
  description: string | null;
  kind: TaskKind;
  status: TaskStatus;
  decision: TaskDecision | null;
  assignee_id: string | null;
  due_at: number | null;
  completed_by: string | null;
  completed_at: number | null;
  created_at: number;
  updated_at: number;
}

export type RunStatus = 'queued' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled';
export type RunErrorCode = 'approval_rejected' | 'task_cancelled' | 'cancelled';

export interface WorkflowRunsTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  project_id: string;
  workflow_id: string;
  /** The workflow's name and version when the run started. */
  workflow_name: string;
  workflow_version: number;
  /** 1, 2, 3… per workflow, in the order runs started (migration 016); null only from release N-1. */
  number: number | null;
  status: RunStatus;
  /** 0-based position of the step the run is at. */
  current_step: number;
  step_count: number;
  started_by: string | null;
  /** How the starter was named at the time (an e-mail, or cli). */
  started_by_label: string;
  error: string | null;
  error_code: RunErrorCode | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  /** When a worker must look at the run next; null while it waits for a person (or has finished). */
  wake_at: number | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  updated_at: number;
}

export type RunStepStatus = 'pending' | 'waiting' | 'completed' | 'failed';

export interface WorkflowRunStepsTable {
  org_id: string;
  run_id: string;
  position: number;
  step_id: string;
  kind: StepKind;
  title: string | null;
  assignee_id: string | null;
  due_in_ms: number | null;
  duration_ms: number | null;
  status: RunStepStatus;
  /** done, approved, rejected, cancelled (the task's), or elapsed (a Wait). */
  outcome: string | null;
  task_id: string | null;
  started_at: number | null;
  finished_at: number | null;
}

export interface ApiKeysTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  user_id: string;
  name: string | null;
  key_hash: string;
  key_prefix: string;
  scope: string;
  created_at: number;
  revoked_at: number | null;
  /** Written at most once a minute per key, off the request path. */
  last_used_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** After this the key answers 401 "API key expired"; null: never (CONTRACT 16). */
  expires_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** When the "expires in 7 days" mail went out. */
  expiry_mailed_at: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface ScimTokensTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  name: string;
  token_hash: string;
  token_prefix: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** A registered OAuth client (RFC 7591): `metadata` is its JSON, a client secret in it sealed. */
export interface OauthClientsTable {
  seq: Generated<number>;
  id: string;
  name: string;
  metadata: string;
  created_at: number;
}

/** What a connected app may reach, for which resource, on whose behalf: the person's consent (CONTRACT 17). */
export type AppResource = 'mcp' | 'v1';

export interface OauthGrantsTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  user_id: string;
  client_id: string;
  resource: AppResource;
  /** The consented scopes, space-separated as OAuth writes them. */
  scope: string;
  /** The authorization server's own record of the grant (JSON). */
  payload: string;
  created_at: number;
  expires_at: number;
  last_used_at: ColumnType<number | null, number | null | undefined, number | null>;
  revoked_at: ColumnType<number | null, number | null | undefined, number | null>;
}

/** Codes, tokens, sessions and interactions of the authorization server, keyed by the SHA-256 of their id. */
export interface OauthEntriesTable {
  seq: Generated<number>;
  id_hash: string;
  model: string;
  grant_id: string | null;
  uid: string | null;
  payload: string;
  expires_at: number;
  consumed_at: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface OauthServerSecretsTable {
  id: string;
  value: string;
  created_at: number;
}

export interface ScimGroupsTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  display_name: string;
  display_name_normalized: string;
  external_id: string | null;
  /** The organisation role the owner mapped this group to, or null. */
  org_role: ScimGroupRole | null;
  created_at: number;
  updated_at: number;
}

export interface ScimGroupMembersTable {
  seq: Generated<number>;
  org_id: string;
  group_id: string;
  user_id: string;
  created_at: number;
}

export interface ScimGroupProjectsTable {
  seq: Generated<number>;
  org_id: string;
  group_id: string;
  project_id: string;
  role: ProjectRole;
  created_at: number;
}

export interface SessionsTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  user_id: string;
  token_hash: string;
  created_at: number;
  /** Idle timeout is measured from here; refreshed at most once a minute. */
  last_seen_at: number;
  /** The absolute end: created_at + 12 h. */
  expires_at: number;
  ip: string | null;
  user_agent: string | null;
  /** The one-time slot the next page shows (sealed with a key derived from the session's token), or null. */
  flash: string | null;
  /** `two_step`: the password was right, the second factor is still owed; such a session opens no page. */
  stage: ColumnType<SessionStage, SessionStage | undefined, SessionStage>;
  /** How it signed in (DASHBOARD 11's sessions table). */
  method: ColumnType<SignInMethod, SignInMethod | undefined, SignInMethod>;
  /** When it last proved it is its user (a strong sign-in, "Confirm it's you"); null when never. */
  confirmed_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** Wrong codes given at the two-step stage (5 end the attempt). */
  failures: ColumnType<number, number | undefined, number>;
}

export type SessionStage = 'active' | 'two_step';
/**
 * `link`: a password link or an invitation (proof of the e-mail address only); `password_code`,
 * `password_recovery` and `password_passkey`: a password and then that second factor; `passkey`: a passkey
 * alone (two factors in one step).
 */
export type SignInMethod = 'password' | 'link' | 'password_code' | 'password_recovery' | 'password_passkey' | 'passkey' | 'sso';

/** An authenticator app (RFC 6238). `secret` is sealed when WEBHOOK_SECRETS_KEY is set. */
export interface TotpFactorsTable {
  seq: Generated<number>;
  org_id: string;
  user_id: string;
  secret: string;
  /** The last time step a code was accepted for: a code is good once (RFC 6238 5.2). */
  last_step: number | null;
  created_at: number;
  enabled_at: number | null;
}

export interface RecoveryCodesTable {
  seq: Generated<number>;
  org_id: string;
  user_id: string;
  /** SHA-256 of the code as shown, without its dashes (80 random bits: no offline guessing). */
  code_hash: string;
  created_at: number;
  used_at: number | null;
}

export interface PasskeysTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  user_id: string;
  /** base64url, as the browser names the credential. */
  credential_id: string;
  /** The COSE public key, base64url. */
  public_key: string;
  counter: number;
  /** JSON array of transport hints, or null. */
  transports: string | null;
  device_type: string;
  backed_up: number;
  aaguid: string | null;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

export type ChallengePurpose = 'register' | 'sign_in' | 'two_step' | 'confirm';

export interface WebauthnChallengesTable {
  challenge: string;
  purpose: ChallengePurpose;
  binding: string;
  user_id: string | null;
  expires_at: number;
}

export type SsoRole = 'viewer' | 'member';

/** One organisation's OpenID Connect connection (DASHBOARD 12). `client_secret` is sealed when WEBHOOK_SECRETS_KEY is set. */
export interface SsoConnectionsTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  issuer: string;
  client_id: string;
  client_secret: string;
  /** "Create members on first sign-in": 1 or 0. */
  jit: number;
  /** The role of members created on first sign-in: never admin or owner. */
  default_role: SsoRole;
  /** "Require single sign-on" (owner), or null. */
  required_at: number | null;
  /** The last successful "Test single sign-on" of this issuer and client, and what the provider said. */
  tested_at: number | null;
  test_subject: string | null;
  test_email: string | null;
  test_email_verified: number | null;
  created_at: number;
  updated_at: number;
}

export interface SsoDomainsTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  /** Lower case, ASCII (punycode), no trailing dot. */
  domain: string;
  /** The value published as `workspace-verification={token}`. */
  token: string;
  created_at: number;
  verified_at: number | null;
  last_checked_at: number | null;
  missing_since: number | null;
}

/**
 * A person at the provider, known by (organisation, issuer, subject): the e-mail is what it said last, never the
 * key. Kept when the connection is deleted or replaced (migration 017); `connection_id` is the one that linked it.
 */
export interface SsoIdentitiesTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  connection_id: string | null;
  issuer: string;
  subject: string;
  user_id: string;
  email: string | null;
  created_at: number;
  last_sign_in_at: number | null;
}

/** `link`: "Link my single sign-on account"; `invitation`: "Accept with single sign-on". */
export type SsoPurpose = 'sign_in' | 'test' | 'confirm' | 'link' | 'invitation';

/** A round trip to the provider under way: found by the hash of its `state`, single use, 10 minutes. */
export interface SsoAttemptsTable {
  state_hash: string;
  org_id: string;
  connection_id: string;
  purpose: SsoPurpose;
  binding: string;
  code_verifier: string;
  nonce: string;
  user_id: string | null;
  next: string | null;
  expires_at: number;
  /** The invitation an `invitation` round trip accepts. */
  invitation_id: string | null;
}

/** A `serve` process that is alive (seen within a minute): for the warning about per-process sign-in limits. */
export interface ServiceInstancesTable {
  id: string;
  hostname: string;
  pid: number;
  shared_limits: number;
  started_at: number;
  seen_at: number;
}

export type AuthTokenPurpose = 'setup' | 'reset' | 'choice';

export interface AuthTokensTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  user_id: string;
  purpose: AuthTokenPurpose;
  token_hash: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export type ActorType = 'user' | 'cli' | 'system';
export type AuditSource = 'api' | 'dashboard' | 'cli' | 'system' | 'scim' | 'mcp';
export type AuditOutcome = 'success' | 'failure';

export interface AuditLogTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  occurred_at: number;
  actor_type: ActorType;
  actor_id: string | null;
  /** The actor as they were named at the time (e-mail), kept even after the user is removed. */
  actor_label: string | null;
  api_key_id: string | null;
  session_id: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  target_label: string | null;
  source: AuditSource;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  outcome: AuditOutcome;
  /** JSON object `{ field: { old, new } }`; never a secret. */
  changes: string | null;
}

export interface InvitationsTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  user_id: string;
  token_hash: string;
  created_at: number;
  expires_at: number;
  /** Set when accepted or superseded by a re-invitation; a used link is dead. */
  used_at: number | null;
}

export interface WebhooksTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  url: string;
  /** JSON array of event names. */
  events: string;
  /** The signing secret, or its sealed form (`wsk1:…`) when WEBHOOK_SECRETS_KEY is set (lib/secret-box.ts). */
  secret: string;
  created_at: number;
  /** 'active' or 'disabled' (CONTRACT 11). */
  status: ColumnType<WebhookStatus, WebhookStatus | undefined, WebhookStatus>;
  /** The rotated-out secret (sealed like `secret`), still signing until `secret_previous_expires_at`. */
  secret_previous: ColumnType<string | null, string | null | undefined, string | null>;
  secret_previous_expires_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** Start of the first failed attempt since the last success; null while healthy. */
  failing_since: ColumnType<number | null, number | null | undefined, number | null>;
  /** When the streak's 24-hour e-mail was sent. */
  failing_mail_at: ColumnType<number | null, number | null | undefined, number | null>;
  disabled_at: ColumnType<number | null, number | null | undefined, number | null>;
  disabled_reason: ColumnType<WebhookDisabledReason | null, WebhookDisabledReason | null | undefined, WebhookDisabledReason | null>;
  /** When the disabling's audit row, cancellations and e-mail were done. */
  disabled_notified_at: ColumnType<number | null, number | null | undefined, number | null>;
  updated_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** Attempts started per second, across every worker (CONTRACT 14); null: no limit. */
  rate_limit: ColumnType<number | null, number | null | undefined, number | null>;
  ordering: ColumnType<WebhookOrdering, WebhookOrdering | undefined, WebhookOrdering>;
  /** The rate limiter's next free start, in microseconds since the epoch (GCRA); null: free now. */
  rate_tat: ColumnType<number | null, number | null | undefined, number | null>;
  /** The ordered subscription's delivery in flight (its head lease), until `fifo_head_expires_at`. */
  fifo_head: ColumnType<string | null, string | null | undefined, string | null>;
  fifo_head_expires_at: ColumnType<number | null, number | null | undefined, number | null>;
}

/** CONTRACT 14: `fifo`, one attempt in flight at a time, in commit order. */
export type WebhookOrdering = 'none' | 'fifo';

export type WebhookStatus = 'active' | 'disabled';
/** failing: every attempt failed for WEBHOOK_DISABLE_AFTER; gone: the endpoint answered 410 Gone. */
export type WebhookDisabledReason = 'failing' | 'gone';

export interface IdempotencyKeysTable {
  org_id: string;
  api_key_id: string;
  key: string;
  fingerprint: string;
  /** 'in_flight' while the first request runs, then 'done'. */
  state: string;
  response_status: number | null;
  response_body: string | null;
  created_at: number;
  expires_at: number;
}

export interface EventsTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  type: string;
  /** The final serialised envelope: these exact bytes are what every attempt sends. */
  body: string;
  occurred_at: number;
  /** W3C `traceparent` of the operation that recorded it; its deliveries continue that trace. Null: untraced. */
  trace_parent: string | null;
  /** 1 for a subscription's test event (example data): kept out of GET /v1/events. */
  test: Generated<number>;
  /** The project the event is about (its `data.project_id`), for the visibility predicate; null for none. */
  project_id: Generated<string | null>;
  /** 1 once the event's private project was deleted: admins and owners only read it. */
  restricted: Generated<number>;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';

export interface DeliveriesTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  event_id: string;
  webhook_id: string;
  event_type: string;
  status: DeliveryStatus;
  /** Attempts made so far (automatic and replayed). */
  attempt_count: number;
  /** Failures counted against the automatic retry schedule. */
  failure_count: number;
  next_attempt_at: number | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  /** Set while a manual replay waits for the worker: that attempt runs outside the automatic schedule. */
  replay_requested_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** 1: a test event (POST /v1/webhooks/:id/test): one attempt, never retried, not counted for health. */
  test: ColumnType<number, number | undefined, number>;
  /** Why a cancelled delivery was cancelled: `subscription_disabled` (replayable after enabling) or `subscription_deleted`. */
  cancel_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** 1: in its subscription's order (CONTRACT 14); waits with no due time until it is the head. */
  fifo: ColumnType<number, number | undefined, number>;
}

export interface DeliveryAttemptsTable {
  seq: Generated<number>;
  id: string;
  org_id: string;
  delivery_id: string;
  attempt_number: number;
  /** 'automatic', 'replay' or 'test'. */
  trigger: string;
  started_at: number;
  duration_ms: number;
  /** JSON object of the request headers sent. */
  request_headers: string;
  response_status: number | null;
  /** JSON object of the response headers received. */
  response_headers: string | null;
  response_body: string | null;
  error: string | null;
  /** 'success' or 'failure'. */
  outcome: string;
  /** Why the attempt started later than it was due: 'rate_limit', or 'order' (earlier deliveries went first). */
  held_reason: ColumnType<string | null, string | null | undefined, string | null>;
  held_ms: ColumnType<number | null, number | null | undefined, number | null>;
}

/** Attempts of one subscription in one UTC hour by outcome, added to as attempts are recorded (migration 005). */
export interface DeliveryHourlyTable {
  org_id: string;
  webhook_id: string;
  /** Epoch hour: started_at integer-divided by 3,600,000. */
  hour: number;
  delivered: number;
  failed: number;
}

export type ReplayJobStatus = 'running' | 'done';

/** A bulk replay of a subscription's failed deliveries; its items are fixed when it is asked for. */
export interface ReplayJobsTable {
  id: string;
  org_id: string;
  webhook_id: string;
  since: number;
  status: ReplayJobStatus;
  total: number;
  queued: number;
  skipped: number;
  /** 1 when more failed deliveries matched than one job takes. */
  more: number;
  /** The audit label of who asked (an e-mail, or cli). */
  requested_by: string;
  created_at: number;
  finished_at: number | null;
}

export type ReplayItemState = 'waiting' | 'queued' | 'skipped';

export interface ReplayJobItemsTable {
  job_id: string;
  delivery_id: string;
  state: ReplayItemState;
}

/** API requests of one organisation on one UTC day, summed over every API process (docs/decisions.md). */
export interface RequestCountsTable {
  org_id: string;
  /** 'YYYY-MM-DD', UTC. */
  day: string;
  count: number;
}

export interface DB {
  organizations: OrganizationsTable;
  users: UsersTable;
  projects: ProjectsTable;
  project_collaborators: ProjectCollaboratorsTable;
  workflows: WorkflowsTable;
  tasks: TasksTable;
  workflow_runs: WorkflowRunsTable;
  workflow_run_steps: WorkflowRunStepsTable;
  api_keys: ApiKeysTable;
  invitations: InvitationsTable;
  webhooks: WebhooksTable;
  idempotency_keys: IdempotencyKeysTable;
  events: EventsTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  sessions: SessionsTable;
  auth_tokens: AuthTokensTable;
  audit_log: AuditLogTable;
  request_counts: RequestCountsTable;
  delivery_hourly: DeliveryHourlyTable;
  replay_jobs: ReplayJobsTable;
  replay_job_items: ReplayJobItemsTable;
  organization_tombstones: OrganizationTombstonesTable;
  stripe_events: StripeEventsTable;
  exports: ExportsTable;
  export_chunks: ExportChunksTable;
  auth_changes: AuthChangesTable;
  totp_factors: TotpFactorsTable;
  recovery_codes: RecoveryCodesTable;
  passkeys: PasskeysTable;
  webauthn_challenges: WebauthnChallengesTable;
  sso_connections: SsoConnectionsTable;
  sso_domains: SsoDomainsTable;
  sso_identities: SsoIdentitiesTable;
  sso_attempts: SsoAttemptsTable;
  service_instances: ServiceInstancesTable;
  scim_tokens: ScimTokensTable;
  scim_groups: ScimGroupsTable;
  scim_group_members: ScimGroupMembersTable;
  scim_group_projects: ScimGroupProjectsTable;
  oauth_clients: OauthClientsTable;
  oauth_grants: OauthGrantsTable;
  oauth_entries: OauthEntriesTable;
  oauth_server_secrets: OauthServerSecretsTable;
}

export type UserRow = Selectable<UsersTable>;
export type ProjectRow = Selectable<ProjectsTable>;
export type ProjectCollaboratorRow = Selectable<ProjectCollaboratorsTable>;
export type WebhookRow = Selectable<WebhooksTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ScimTokenRow = Selectable<ScimTokensTable>;
export type ScimGroupRow = Selectable<ScimGroupsTable>;
export type OauthGrantRow = Selectable<OauthGrantsTable>;
export type OauthEntryRow = Selectable<OauthEntriesTable>;
export type OrganizationRow = Selectable<OrganizationsTable>;
export type InvitationRow = Selectable<InvitationsTable>;
export type EventRow = Selectable<EventsTable>;
export type DeliveryRow = Selectable<DeliveriesTable>;
export type DeliveryAttemptRow = Selectable<DeliveryAttemptsTable>;
export type SessionRow = Selectable<SessionsTable>;
export type TotpFactorRow = Selectable<TotpFactorsTable>;
export type PasskeyRow = Selectable<PasskeysTable>;
export type SsoConnectionRow = Selectable<SsoConnectionsTable>;
export type SsoDomainRow = Selectable<SsoDomainsTable>;
export type SsoIdentityRow = Selectable<SsoIdentitiesTable>;
export type SsoAttemptRow = Selectable<SsoAttemptsTable>;
export type ServiceInstanceRow = Selectable<ServiceInstancesTable>;
export type AuthTokenRow = Selectable<AuthTokensTable>;
export type AuditLogRow = Selectable<AuditLogTable>;
export type ExportRow = Selectable<ExportsTable>;
export type NewProject = Insertable<ProjectsTable>;
export type NewWebhook = Insertable<WebhooksTable>;
export type ProjectUpdate = Updateable<ProjectsTable>;
export type ReplayJobRow = Selectable<ReplayJobsTable>;
export type WorkflowRow = Selectable<WorkflowsTable>;
export type TaskRow = Selectable<TasksTable>;
export type RunRow = Selectable<WorkflowRunsTable>;
export type RunStepRow = Selectable<WorkflowRunStepsTable>;

/** An organisation's lifecycle state as every door sees it (services/access/workspace.ts, DASHBOARD 10). */
export interface Workspace {
  readonly state: OrgState;
  /** Cancellation + 30 days; null while active. */
  readonly deletionAt: number | null;
}
