import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPgDatabase, type TestDialect } from './test-env.js';

/** The built CLI (test/global-setup.ts compiles dist/ before the suites). */
export const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/workspace');

/** Variables the service reads; stripped from the inherited environment so a developer's shell cannot leak in. */
const SERVICE_VARIABLES = [
  'PORT', 'HOST', 'DATA_DIR', 'DATABASE_URL', 'DATABASE_POOL_SIZE', 'REDIS_URL', 'REDIS_KEY_PREFIX', 'PUBLIC_BASE_URL',
  'SMTP_URL', 'MAIL_FROM', 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'WEBHOOK_RETRY_SCHEDULE', 'WEBHOOK_TIMEOUT',
  'WEBHOOK_CONCURRENCY', 'WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY', 'WEBHOOK_DELIVERED_RETENTION', 'WEBHOOK_FAILED_RETENTION',
  'RATE_LIMIT_PER_MINUTE', 'AUTH_FAILURE_LIMIT_PER_MINUTE', 'AUDIT_RETENTION_DAYS', 'WORKFLOW_MAX_STEPS', 'WORKFLOW_MAX_ACTIVE_RUNS',
  'WORKFLOW_LEASE', 'DELETION_BATCH_SIZE', 'LOG_LEVEL', 'TRUST_PROXY', 'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET',
  'METRICS_PORT', 'METRICS_HOST', 'METRICS_TOKEN', 'MIGRATE_ON_START', 'SHUTDOWN_TIMEOUT', 'HSTS_MAX_AGE',
  'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'OTEL_SERVICE_NAME', 'OTEL_RESOURCE_ATTRIBUTES', 'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG', 'OTEL_SDK_DISABLED', 'OTEL_EXPORTER_OTLP_TIMEOUT', 'DNS_SERVERS', 'SSO_ALLOW_PRIVATE_NETWORKS',
];

export function cliEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SERVICE_VARIABLES) delete base[name];
  // Every `serve` and `worker` opens a metrics listener: on its default port (9464) processes of parallel
  // suites would collide, so each takes a free port unless the test says otherwise.
  return { ...base, METRICS_PORT: '0', ...env };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `./bin/workspace ...args` to completion. */
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** `runCli` with --json, expecting success: the parsed document. */
export async function cliJson(args: string[], env: Record<string, string>): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const result = await runCli([...args, '--json'], env);
  if (result.code !== 0) throw new Error(`workspace ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

export interface ServeProcess {
  child: ChildProcess;
  /** e.g. http://127.0.0.1:41234 (empty for `worker`, which does not listen). */
  address: string;
  /** Where its GET /metrics listens (null with METRICS_PORT=off). */
  metricsAddress: string | null;
  /** Every stdout line so far (pino JSON). */
  lines: string[];
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `./bin/workspace <command>` on a port the OS picks (PORT=0) and resolves once it logs that it
 * is ready, with the address it logged.
 */
export function startServe(env: Record<string, string>, command = 'serve'): Promise<ServeProcess> {
  // WORKSPACE_BIN: another build's entry point (the rolling-update test runs the previous release).
  const { WORKSPACE_BIN: bin = BIN, ...rest } = env;
  const child = spawn(process.execPath, [bin, command], { env: cliEnv({ PORT: '0', ...rest }), stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  let partial = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        let entry: { msg?: string; address?: string; metricsAddress?: string | null } = {};
        try {
          entry = JSON.parse(line);
        } catch {
          // Kept in `lines`; the suite asserts that every line is JSON.
        }
        if (entry.msg?.startsWith('ready')) {
          resolve({ child, address: entry.address ?? '', metricsAddress: entry.metricsAddress ?? null, lines, stderr: () => stderr, exited });
        }
      }
    });
    void exited.then(({ code, signal }) => reject(new Error(`${command} exited (${code ?? signal}) before it was ready: ${stderr}`)));
  });
}

/** A fresh DATA_DIR (and, for PostgreSQL, a fresh database) with the env to reach them; `cleanup` removes both. */
export async function createCliWorld(dialect: TestDialect): Promise<{ env: Record<string, string>; dataDir: string; cleanup(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-cli-'));
  const pg = dialect === 'postgres' ? await createPgDatabase() : null;
  return {
    env: { DATA_DIR: dataDir, ...(pg ? { DATABASE_URL: pg.url } : {}) },
    dataDir,
    async cleanup() {
      await pg?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
