import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../src/config.js';
import { createContainer, type Container, type ContainerOptions } from '../../src/container.js';
import { buildApp, type App } from '../../src/app.js';
import type { Clock } from '../../src/lib/time.js';

export type TestDialect = 'sqlite' | 'postgres';

/**
 * The dialects the integration suite runs on. Every suite loops over this list, so one set of tests
 * proves both databases. TEST_DIALECTS narrows it (e.g. `TEST_DIALECTS=sqlite` for a quick run).
 */
export function testDialects(): TestDialect[] {
  const raw = process.env.TEST_DIALECTS ?? 'sqlite,postgres';
  const dialects = raw.split(',').map((d) => d.trim()).filter(Boolean);
  // A misspelt name must fail the run, not quietly test less (it would otherwise run as SQLite).
  const unknown = dialects.filter((d) => d !== 'sqlite' && d !== 'postgres');
  if (unknown.length > 0 || dialects.length === 0) throw new Error(`TEST_DIALECTS must list sqlite and/or postgres, got "${raw}"`);
  return dialects as TestDialect[];
}

export const TEST_PG_ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh, uniquely named PostgreSQL database; `drop` removes it. */
export async function createPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `ws_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(TEST_PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Raw payload, sent as is (for malformed JSON tests). */
  payload?: string | Buffer;
  headers?: Record<string, string>;
}

export interface TestEnv {
  dialect: TestDialect;
  config: Config;
  container: Container;
  app: App;
  dataDir: string;
  request(method: string, url: string, options?: RequestOptions): Promise<ApiResponse>;
  /** A new organisation with an owner and a full-access owner key. */
  createOrg(name?: string): Promise<TestOrg>;
  close(): Promise<void>;
}

export interface TestOrg {
  id: string;
  ownerId: string;
  ownerKey: string;
  /** Adds an active member with the role and returns a key of the given scope. */
  member(role: 'owner' | 'admin' | 'member' | 'viewer', scope?: string): Promise<{ userId: string; key: string; keyId: string }>;
}

export interface TestEnvOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Defaults to a silent logger; pass one to assert on what is logged. */
  logger?: FastifyBaseLogger;
  /** Where the Stripe client sends API calls (a local stand-in for api.stripe.com). */
  stripeApi?: ContainerOptions['stripeApi'];
  /** Trusted CA(s) for identity providers (a test provider's self-signed certificate). */
  outboundCa?: ContainerOptions['outboundCa'];
  /** The password key derivation, wrapped to count what sign-in costs. */
  passwordKdf?: ContainerOptions['passwordKdf'];
}

export async function createTestEnv(dialect: TestDialect, options: TestEnvOptions = {}): Promise<TestEnv> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-test-'));
  const pgDb = dialect === 'postgres' ? await createPgDatabase() : null;
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
    ...options.env,
  });
  const container = await createContainer(config, { migrate: true, clock: options.clock, logger: options.logger ?? pino({ level: 'silent' }), stripeApi: options.stripeApi, outboundCa: options.outboundCa, passwordKdf: options.passwordKdf });
  const app = await buildApp(container);
  await app.ready();

  let counter = 0;
  const env: TestEnv = {
    dialect,
    config,
    container,
    app,
    dataDir,
    async request(method, url, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.key) headers.authorization = `Bearer ${opts.key}`;
      let payload: string | Buffer | undefined = opts.payload;
      if (opts.body !== undefined) {
        payload = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await app.inject({ method: method as 'GET', url, headers, payload });
      let body: unknown = undefined;
      if (res.body.length > 0 && String(res.headers['content-type'] ?? '').includes('json')) body = JSON.parse(res.body);
      return { status: res.statusCode, headers: res.headers, body, text: res.body };
    },
    async createOrg(name = 'Acme') {
      const created = await container.services.admin.createOrganization({ name, ownerEmail: `owner${++counter}@example.com`, ownerName: 'Olive Owner' });
      const orgId = created.organization.id;
      return {
        id: orgId,
        ownerId: created.owner.id,
        ownerKey: created.api_key.key,
        async member(role, scope = 'full') {
          const user = await container.services.admin.addUser({ orgId, email: `${role}${++counter}@example.com`, role, name: `${role} ${counter}` });
          const key = await container.services.admin.createKey({ userId: user.id, scope });
          return { userId: user.id, key: key.key, keyId: key.id };
        },
      };
    },
    async close() {
      await app.close();
      await container.close();
      await pgDb?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return env;
}
