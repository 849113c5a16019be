import fs from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { parseSecretKeys } from './lib/secret-box.js';

/**
 * Configuration is read from the environment once, validated, and frozen. A bad value throws a
 * ConfigError naming the variable so the process stops at start rather than misbehaving later.
 */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  readonly databasePoolSize: number;
  readonly redisUrl: string | null;
  /** Prefix of every Redis key and channel, so several deployments (or test runs) can share one Redis. */
  readonly redisKeyPrefix: string;
  readonly publicBaseUrl: string;
  readonly smtpUrl: string | null;
  readonly mailFrom: string;
  readonly webhookAllowPrivateNetworks: boolean;
  /** Identity providers may be on loopback and private addresses (SSO_ALLOW_PRIVATE_NETWORKS, or the webhook switch). */
  readonly ssoAllowPrivateNetworks: boolean;
  /** DNS_SERVERS: the resolvers (`ip` or `ip:port`) that domain verification asks; empty for the system's. */
  readonly dnsServers: readonly string[];
  /** Delays in milliseconds between a failed attempt and the next retry. */
  readonly webhookRetrySchedule: readonly number[];
  readonly webhookTimeoutMs: number;
  readonly webhookConcurrency: number;
  readonly webhookPerSubscriptionConcurrency: number;
  /** A subscription whose every attempt failed for this long is disabled (CONTRACT 11); null when `off`. */
  readonly webhookDisableAfterMs: number | null;
  /** The most a receiver's `Retry-After` (on 429 or 503) may move a retry out (CONTRACT 14). */
  readonly webhookRetryAfterMaxMs: number;
  /** WEBHOOK_SECRETS_KEY: the current key first, then older ones; empty when unset (secrets stored as given). */
  readonly webhookSecretsKeys: readonly Buffer[];
  /** How long delivered attempt history is kept, in milliseconds. */
  readonly deliveredRetentionMs: number;
  /** How long failed attempt history is kept, in milliseconds. */
  readonly failedRetentionMs: number;
  /** EVENT_RETENTION: how long GET /v1/events keeps an event, whether or not a subscription listened. */
  readonly eventRetentionMs: number;
  readonly rateLimitPerMinute: number;
  readonly authFailureLimitPerMinute: number;
  /** How many days audit log entries are kept before they may be deleted. */
  readonly auditRetentionDays: number;
  /** Steps per workflow (at most the contract's 20). */
  readonly workflowMaxSteps: number;
  /** Queued, running and waiting workflow runs per organisation. */
  readonly workflowMaxActiveRuns: number;
  /** How long a worker holds a claimed workflow run before another worker may take it (a killed worker's runs wait this long). */
  readonly workflowLeaseMs: number;
  /** Rows the deletion job removes per statement (each batch its own transaction). */
  readonly deletionBatchSize: number;
  readonly logLevel: string;
  readonly trustProxy: boolean;
  /** OAUTH_DYNAMIC_REGISTRATION (default on): anyone may register an OAuth client at /oauth/register (RFC 7591, CONTRACT 17). */
  readonly oauthDynamicRegistration: boolean;
  /** Port of the separate /metrics listener (`0`: any free port); null when METRICS_PORT=off. */
  readonly metricsPort: number | null;
  /** Loopback by default: the metrics listener is for the scraper, never for the public. */
  readonly metricsHost: string;
  /** When set, /metrics requires `Authorization: Bearer <token>`. */
  readonly metricsToken: string | null;
  /** Both set, or neither: Stripe drives the subscription through `POST /billing/stripe/webhook` (docs/lifecycle.md). */
  readonly stripe: { readonly secretKey: string; readonly webhookSecret: string } | null;
  /** `serve` and `worker` apply pending migrations at start (true), or refuse an out-of-date schema (false). */
  readonly migrateOnStart: boolean;
  /** How long a graceful shutdown (SIGTERM) may take before the process gives up and exits 1. */
  readonly shutdownTimeoutMs: number;
  /** `Strict-Transport-Security` max-age in seconds, sent when PUBLIC_BASE_URL is https; null when off. */
  readonly hstsMaxAgeSeconds: number | null;
  /** OpenTelemetry tracing; null (the default) when OTEL_EXPORTER_OTLP_ENDPOINT is unset: no spans, no cost. */
  readonly tracing: TracingConfig | null;
}

/** The standard `OTEL_*` variables this service reads, parsed (docs/deployment.md, "Traces"). */
export interface TracingConfig {
  /** Full URL spans are POSTed to (`…/v1/traces`). */
  readonly tracesUrl: string;
  readonly protocol: 'http/protobuf' | 'http/json';
  /** Extra request headers for the collector (OTEL_EXPORTER_OTLP_HEADERS / _TRACES_HEADERS). */
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
  /** Resource attributes from OTEL_RESOURCE_ATTRIBUTES, besides service.name. */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  /** The share of new traces recorded (0..1); a trace begun upstream follows its caller's decision. */
  readonly sampleRatio: number;
  /** false for `always_on`/`traceidratio`-style samplers that ignore the caller's decision. */
  readonly parentBased: boolean;
  readonly exportTimeoutMs: number;
}

/** Which process reads the configuration: each has its own default metrics port, so both start on one host. */
export type ProcessRole = 'serve' | 'worker';

const DEFAULT_METRICS_PORT: Record<ProcessRole, number> = { serve: 9464, worker: 9465 };

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `500ms`, `30s`, `2m`, `2h`, `7d`; a bare number is seconds. */
export function parseDuration(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) return null;
  const value = Number(match[1]) * DURATION_UNITS[match[2] ?? 's']!;
  return Number.isFinite(value) ? Math.round(value) : null;
}

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(value)) return true;
  if (['false', '0', 'no', 'off'].includes(value)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function readDuration(env: Env, name: string, fallback: string, minMs = 1): number {
  const raw = env[name];
  const text = raw === undefined || raw === '' ? fallback : raw;
  const value = parseDuration(text);
  if (value === null || value < minMs) throw new ConfigError(name, `must be a duration such as 10s, 2m or 2h, got "${text}"`);
  return value;
}

function readUrl(env: Env, name: string, protocols: string[]): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be a URL');
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(name, `must use ${protocols.map((p) => p.replace(':', '://')).join(' or ')}`);
  }
  return raw;
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** An IP address (`0.0.0.0`, `::`) or a host name; not a URL. */
function readHost(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (isIP(raw) === 0 && !HOSTNAME.test(raw)) throw new ConfigError(name, `must be an IP address or a host name, got "${raw}"`);
  return raw;
}

/** A directory path; it may not exist yet (it is created), but it may not be something else. */
function readDirectory(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim() || fallback;
  if (raw.includes('\0')) throw new ConfigError(name, 'must be a directory path');
  const resolved = path.resolve(raw);
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(resolved, { throwIfNoEntry: false });
  } catch (err) {
    // e.g. ENOTDIR: a parent of the path is a file.
    throw new ConfigError(name, `cannot be used as a directory: "${resolved}" (${(err as { code?: string }).code ?? 'error'})`);
  }
  if (stat && !stat.isDirectory()) throw new ConfigError(name, `must be a directory, but "${resolved}" is a file`);
  // A path that does not exist yet is created later, which fails if an ancestor is a file. Node 20 threw
  // ENOTDIR above for that (so does 22.14); Node 24 answers "no entry" instead, so the nearest existing ancestor is checked.
  if (!stat) {
    for (let parent = path.dirname(resolved); ; parent = path.dirname(parent)) {
      const above = fs.statSync(parent, { throwIfNoEntry: false });
      if (above) {
        if (!above.isDirectory()) throw new ConfigError(name, `cannot be used as a directory: "${resolved}" ("${parent}" is a file)`);
        break;
      }
      if (path.dirname(parent) === parent) break;
    }
  }
  return resolved;
}

/** WEBHOOK_DISABLE_AFTER: a duration, or `off`. */
function readDisableAfter(env: Env): number | null {
  const raw = env.WEBHOOK_DISABLE_AFTER?.trim();
  if (raw !== undefined && ['off', 'false', 'never'].includes(raw.toLowerCase())) return null;
  return readDuration(env, 'WEBHOOK_DISABLE_AFTER', '5d');
}

function readSecretKeys(env: Env): readonly Buffer[] {
  const raw = env.WEBHOOK_SECRETS_KEY?.trim();
  if (!raw) return Object.freeze([]);
  const keys = parseSecretKeys(raw);
  if (typeof keys === 'string') throw new ConfigError('WEBHOOK_SECRETS_KEY', keys);
  return Object.freeze(keys);
}

/** STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET switch Stripe on together; one without the other is a mistake. */
function readStripe(env: Env): Config['stripe'] {
  const secretKey = env.STRIPE_SECRET_KEY?.trim() || null;
  const webhookSecret = env.STRIPE_WEBHOOK_SECRET?.trim() || null;
  if (secretKey === null && webhookSecret === null) return null;
  if (secretKey === null) throw new ConfigError('STRIPE_SECRET_KEY', 'must be set when STRIPE_WEBHOOK_SECRET is');
  if (webhookSecret === null) throw new ConfigError('STRIPE_WEBHOOK_SECRET', 'must be set when STRIPE_SECRET_KEY is');
  if (!/^(sk|rk)_(test|live)_[A-Za-z0-9]+$/.test(secretKey)) throw new ConfigError('STRIPE_SECRET_KEY', 'must be a Stripe secret or restricted key (sk_live_…, sk_test_…, rk_…)');
  if (!/^whsec_[A-Za-z0-9+/=]+$/.test(webhookSecret)) throw new ConfigError('STRIPE_WEBHOOK_SECRET', 'must be a webhook signing secret (whsec_…)');
  return Object.freeze({ secretKey, webhookSecret });
}

/** `ip`, `ip:port` or `[ipv6]:port`, comma-separated: what `node:dns`'s Resolver#setServers accepts. */
function readDnsServers(env: Env): readonly string[] {
  const raw = env.DNS_SERVERS?.trim();
  if (!raw) return Object.freeze([]);
  const servers = raw.split(',').map((part) => part.trim()).filter(Boolean);
  for (const server of servers) {
    const match = /^(?:\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?|(\d{1,3}(?:\.\d{1,3}){3})(?::(\d{1,5}))?|([0-9a-fA-F:]+))$/.exec(server);
    const ip = match ? (match[1] ?? match[3] ?? match[5])! : '';
    const port = match ? Number(match[2] ?? match[4] ?? 53) : NaN;
    if (!match || isIP(ip) === 0 || port < 1 || port > 65535) {
      throw new ConfigError('DNS_SERVERS', `must be a comma-separated list of IP addresses, each optionally with :port (e.g. 10.0.0.2,10.0.0.3:5353), got "${server}"`);
    }
  }
  return Object.freeze(servers);
}

/** `off` switches the metrics listener off (null); otherwise a port like PORT, and never PORT itself. */
function readMetricsPort(env: Env, apiPort: number, role: ProcessRole): number | null {
  const raw = env.METRICS_PORT?.trim() || String(DEFAULT_METRICS_PORT[role]);
  if (raw.toLowerCase() === 'off') return null;
  const port = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (Number.isNaN(port) || port > 65535) throw new ConfigError('METRICS_PORT', `must be a port number (0 to 65535) or off, got "${raw}"`);
  // Two listeners cannot share a port; 0 picks a free one for each.
  if (port !== 0 && port === apiPort) throw new ConfigError('METRICS_PORT', `must differ from PORT (${apiPort}), or be off`);
  return port;
}

/** Sent in a header and compared as is: visible ASCII only, and long enough not to be guessed. */
function readMetricsToken(env: Env): string | null {
  const raw = env.METRICS_TOKEN?.trim();
  if (!raw) return null;
  if (!/^[\x21-\x7e]{16,512}$/.test(raw)) throw new ConfigError('METRICS_TOKEN', 'must be 16 to 512 visible ASCII characters (no spaces)');
  return raw;
}

/** `k1=v1,k2=v2` with percent-encoded values (the W3C baggage format the OTEL_* lists use). */
function readKeyValues(env: Env, name: string): Record<string, string> {
  const raw = env[name]?.trim();
  const out: Record<string, string> = {};
  if (!raw) return out;
  for (const part of raw.split(',')) {
    const eq = part.indexOf('=');
    const key = eq > 0 ? part.slice(0, eq).trim() : '';
    if (!key || /[\s"(),/:;<=>?@[\\\]{}]/.test(key)) throw new ConfigError(name, `must be a list of key=value pairs separated by commas, got "${raw}"`);
    let value: string;
    try {
      value = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      throw new ConfigError(name, `has a value that is not valid percent-encoding: "${part}"`);
    }
    if (/[\r\n]/.test(value)) throw new ConfigError(name, 'values may not contain line breaks');
    out[key] = value;
  }
  return out;
}

const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];

/**
 * Tracing is on when a traces endpoint is set (and OTEL_SDK_DISABLED is not). Only the OTLP/HTTP exporters
 * ship (http/protobuf, the specification's default, and http/json); grpc is refused at start, not ignored.
 */
function readTracing(env: Env, role: ProcessRole): TracingConfig | null {
  if (readBool(env, 'OTEL_SDK_DISABLED', false)) return null;
  const tracesEndpoint = readUrl(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['http:', 'https:']);
  const baseEndpoint = readUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']);
  if (!tracesEndpoint && !baseEndpoint) return null;
  // The per-signal variable is the full URL; the base one gets the signal's path appended (OTLP exporter spec).
  const tracesUrl = tracesEndpoint ?? `${baseEndpoint!.replace(/\/+$/, '')}/v1/traces`;
  const protocolName = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = env[protocolName]?.trim() || 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new ConfigError(protocolName, `must be http/protobuf or http/json (grpc is not supported), got "${protocol}"`);
  }
  const sampler = env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on';
  if (!SAMPLERS.includes(sampler)) throw new ConfigError('OTEL_TRACES_SAMPLER', `must be one of ${SAMPLERS.join(', ')}, got "${sampler}"`);
  let sampleRatio = sampler.endsWith('always_off') ? 0 : 1;
  if (sampler.endsWith('traceidratio')) {
    const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim() || '1';
    sampleRatio = Number(arg);
    if (!/^\d*\.?\d+$/.test(arg) || sampleRatio < 0 || sampleRatio > 1) {
      throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `must be a number from 0 to 1, got "${arg}"`);
    }
  }
  const resourceAttributes = readKeyValues(env, 'OTEL_RESOURCE_ATTRIBUTES');
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || resourceAttributes['service.name'] || 'workspace-service';
  delete resourceAttributes['service.name'];
  resourceAttributes['workspace.process'] ??= role;
  return Object.freeze({
    tracesUrl,
    protocol,
    headers: Object.freeze({ ...readKeyValues(env, 'OTEL_EXPORTER_OTLP_HEADERS'), ...readKeyValues(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS') }),
    serviceName,
    resourceAttributes: Object.freeze(resourceAttributes),
    sampleRatio,
    parentBased: sampler.startsWith('parentbased_'),
    exportTimeoutMs: readDuration(env, 'OTEL_EXPORTER_OTLP_TIMEOUT', '10s'),
  });
}

/** A number of seconds; `0` switches the header off. */
function readHsts(env: Env, publicBaseUrl: string): number | null {
  const maxAge = readInt(env, 'HSTS_MAX_AGE', 31_536_000, 0, 63_072_000);
  // Browsers ignore the header over http; sending it there would only mislead whoever reads the responses.
  return maxAge > 0 && publicBaseUrl.startsWith('https://') ? maxAge : null;
}

/**
 * `role` picks the defaults that differ between the processes on one host (METRICS_PORT: 9464 for
 * `serve`, 9465 for `worker`); one-shot commands read the same variables as `serve`.
 */
export function loadConfig(env: Env = process.env, role: ProcessRole = 'serve'): Config {
  const port = readInt(env, 'PORT', 3000, 0, 65535);
  const host = readHost(env, 'HOST', '127.0.0.1');
  const dataDir = readDirectory(env, 'DATA_DIR', './data');

  const publicBaseRaw = readUrl(env, 'PUBLIC_BASE_URL', ['http:', 'https:']);
  const publicBaseUrl = (publicBaseRaw ?? `http://localhost:${port}`).replace(/\/+$/, '');

  const scheduleText = env.WEBHOOK_RETRY_SCHEDULE?.trim() || '30s,2m,10m,30m,2h';
  const webhookRetrySchedule = scheduleText.split(',').map((part) => {
    const ms = parseDuration(part);
    if (ms === null) {
      throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', `must be a comma-separated list of durations such as 30s,2m,2h, got "${scheduleText}"`);
    }
    return ms;
  });

  const logLevel = env.LOG_LEVEL?.trim() || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of fatal, error, warn, info, debug, trace, silent, got "${logLevel}"`);
  }

  return Object.freeze({
    stripe: readStripe(env),
    port,
    host,
    dataDir,
    databaseUrl: readUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    databasePoolSize: readInt(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    redisUrl: readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisKeyPrefix: env.REDIS_KEY_PREFIX?.trim() || 'ws:',
    publicBaseUrl,
    smtpUrl: readUrl(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: env.MAIL_FROM?.trim() || 'Workspace Service <no-reply@workspace.invalid>',
    webhookAllowPrivateNetworks: readBool(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    ssoAllowPrivateNetworks: readBool(env, 'SSO_ALLOW_PRIVATE_NETWORKS', false) || readBool(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    dnsServers: readDnsServers(env),
    webhookRetrySchedule: Object.freeze(webhookRetrySchedule),
    webhookTimeoutMs: readDuration(env, 'WEBHOOK_TIMEOUT', '10s'),
    webhookConcurrency: readInt(env, 'WEBHOOK_CONCURRENCY', 64, 1, 10_000),
    webhookPerSubscriptionConcurrency: readInt(env, 'WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY', 4, 1, 1000),
    webhookDisableAfterMs: readDisableAfter(env),
    webhookRetryAfterMaxMs: readDuration(env, 'WEBHOOK_RETRY_AFTER_MAX', '1h', 1000),
    webhookSecretsKeys: readSecretKeys(env),
    deliveredRetentionMs: readDuration(env, 'WEBHOOK_DELIVERED_RETENTION', '7d'),
    failedRetentionMs: readDuration(env, 'WEBHOOK_FAILED_RETENTION', '30d'),
    eventRetentionMs: readDuration(env, 'EVENT_RETENTION', '30d', 1000),
    rateLimitPerMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', 1000, 1, 100_000_000),
    authFailureLimitPerMinute: readInt(env, 'AUTH_FAILURE_LIMIT_PER_MINUTE', 60, 1, 100_000_000),
    auditRetentionDays: readInt(env, 'AUDIT_RETENTION_DAYS', 180, 1, 36_500),
    workflowMaxSteps: readInt(env, 'WORKFLOW_MAX_STEPS', 20, 1, 20),
    workflowMaxActiveRuns: readInt(env, 'WORKFLOW_MAX_ACTIVE_RUNS', 1000, 1, 10_000_000),
    workflowLeaseMs: readDuration(env, 'WORKFLOW_LEASE', '30s', 1000),
    deletionBatchSize: readInt(env, 'DELETION_BATCH_SIZE', 1000, 1, 10_000),
    logLevel,
    trustProxy: readBool(env, 'TRUST_PROXY', false),
    oauthDynamicRegistration: readBool(env, 'OAUTH_DYNAMIC_REGISTRATION', true),
    metricsPort: readMetricsPort(env, port, role),
    metricsHost: readHost(env, 'METRICS_HOST', '127.0.0.1'),
    metricsToken: readMetricsToken(env),
    migrateOnStart: readBool(env, 'MIGRATE_ON_START', true),
    shutdownTimeoutMs: readDuration(env, 'SHUTDOWN_TIMEOUT', '25s', 1000),
    hstsMaxAgeSeconds: readHsts(env, publicBaseUrl),
    tracing: readTracing(env, role),
  });
}
