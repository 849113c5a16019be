import type { DB } from '../schema.js';

/** Tables that exist in the embedded database only (migration 008): PostgreSQL announces the same with NOTIFY. */
export const SQLITE_ONLY_TABLES = ['auth_changes'] as const satisfies ReadonlyArray<keyof DB>;

/**
 * Tables in both schemas whose rows describe the running processes, not the organisations' data: a copied
 * row would make the first `serve` on PostgreSQL believe another instance shares its database.
 */
export const PROCESS_TABLES = ['service_instances'] as const satisfies ReadonlyArray<keyof DB>;

type CopiedTable = Exclude<keyof DB, (typeof SQLITE_ONLY_TABLES)[number] | (typeof PROCESS_TABLES)[number]>;

/**
 * Every table that `copy-to-postgres` moves, with its primary key (the order rows are read and written in,
 * and what the verification checksums). Listed parents first, because PostgreSQL checks each foreign key
 * as the row arrives. The compiler refuses a table of `DB` missing here, and test/cli/copy-to-postgres.test.ts
 * checks the list against both dialects' real schemas, so a future table cannot be forgotten.
 */
const PLAN = {
  organizations: ['seq'],
  organization_tombstones: ['id'],
  stripe_events: ['id'],
  users: ['seq'],
  projects: ['seq'],
  project_collaborators: ['seq'],
  workflows: ['seq'],
  workflow_runs: ['seq'],
  workflow_run_steps: ['run_id', 'position'],
  tasks: ['seq'],
  api_keys: ['seq'],
  invitations: ['seq'],
  sessions: ['seq'],
  auth_tokens: ['seq'],
  totp_factors: ['seq'],
  recovery_codes: ['seq'],
  passkeys: ['seq'],
  webauthn_challenges: ['challenge'],
  sso_connections: ['seq'],
  sso_domains: ['seq'],
  sso_identities: ['seq'],
  sso_attempts: ['state_hash'],
  scim_tokens: ['seq'],
  scim_groups: ['seq'],
  scim_group_members: ['seq'],
  scim_group_projects: ['seq'],
  oauth_clients: ['seq'],
  oauth_grants: ['seq'],
  oauth_entries: ['seq'],
  oauth_server_secrets: ['id'],
  webhooks: ['seq'],
  idempotency_keys: ['api_key_id', 'key'],
  events: ['seq'],
  deliveries: ['seq'],
  delivery_attempts: ['seq'],
  delivery_hourly: ['org_id', 'webhook_id', 'hour'],
  replay_jobs: ['id'],
  replay_job_items: ['job_id', 'delivery_id'],
  request_counts: ['org_id', 'day'],
  audit_log: ['seq'],
  exports: ['seq'],
  export_chunks: ['export_id', 'position'],
} as const satisfies Record<CopiedTable, readonly string[]>;

export interface CopiedTablePlan {
  readonly table: CopiedTable;
  readonly key: readonly string[];
  /** The key is the table's `seq` (bigserial in PostgreSQL): its sequence is moved past the copied rows. */
  readonly sequence: boolean;
}

export const COPIED_TABLES: readonly CopiedTablePlan[] = Object.entries(PLAN).map(([table, key]) => ({
  table: table as CopiedTable,
  key,
  sequence: key.length === 1 && key[0] === 'seq',
}));
