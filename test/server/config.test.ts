import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseDuration } from '../../src/config.js';
import { runCli } from '../helpers/cli.js';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-config-'));
const aFile = path.join(scratch, 'not-a-directory');
fs.writeFileSync(aFile, 'x');
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

/** CONTRACT section 10 first, then the extra variables src/config.ts reads. Each value must be refused. */
const BAD_VALUES: Array<[variable: string, values: string[]]> = [
  ['PORT', ['abc', '70000', '-1', '80.5']],
  ['HOST', ['not a host', 'http://127.0.0.1', 'exa_mple.com']],
  ['DATA_DIR', [aFile, path.join(aFile, 'below-a-file')]],
  ['DATABASE_URL', ['mysql://localhost/db', 'not a url']],
  ['REDIS_URL', ['http://localhost:6379', '127.0.0.1:6379']],
  ['PUBLIC_BASE_URL', ['ftp://example.com', 'example.com']],
  ['SMTP_URL', ['http://mail.example.com', 'mail']],
  ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', ['maybe', '2']],
  ['WEBHOOK_RETRY_SCHEDULE', ['30s,,2m', 'soon', '30s,2x']],
  ['WEBHOOK_TIMEOUT', ['forever', '0s', '-5s']],
  ['RATE_LIMIT_PER_MINUTE', ['0', 'lots', '1.5']],
  ['DATABASE_POOL_SIZE', ['0', 'ten']],
  ['WEBHOOK_CONCURRENCY', ['0', 'many']],
  ['WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY', ['0', 'x']],
  ['WEBHOOK_DELIVERED_RETENTION', ['a week']],
  ['WEBHOOK_FAILED_RETENTION', ['1 month']],
  ['AUTH_FAILURE_LIMIT_PER_MINUTE', ['0', 'none']],
  ['AUDIT_RETENTION_DAYS', ['0', '36501', '30d', '1.5', '-1']],
  ['DELETION_BATCH_SIZE', ['0', '10001', 'all', '1.5']],
  ['LOG_LEVEL', ['verbose']],
  ['TRUST_PROXY', ['sometimes']],
];

describe('configuration', () => {
  it.each(BAD_VALUES)('refuses a bad %s with a ConfigError naming it', (variable, values) => {
    for (const value of values) {
      const error = configError({ DATA_DIR: scratch, [variable]: value });
      expect(error.variable, `${variable}=${value}`).toBe(variable);
      expect(error.message).toContain(variable);
    }
  });

  it('defaults match CONTRACT section 10', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.host).toBe('127.0.0.1');
    expect(config.dataDir).toBe(path.resolve('./data'));
    expect(config.databaseUrl).toBeNull();
    expect(config.redisUrl).toBeNull();
    expect(config.publicBaseUrl).toBe('http://localhost:3000');
    expect(config.smtpUrl).toBeNull();
    expect(config.webhookAllowPrivateNetworks).toBe(false);
    expect(config.webhookRetrySchedule).toEqual([30_000, 120_000, 600_000, 1_800_000, 7_200_000]);
    expect(config.webhookTimeoutMs).toBe(10_000);
    expect(config.rateLimitPerMinute).toBe(1000);
    expect(config.auditRetentionDays).toBe(180);
    expect(config.deletionBatchSize).toBe(1000);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('PUBLIC_BASE_URL defaults to http://localhost:PORT and follows PORT', () => {
    expect(loadConfig({ PORT: '8080' }).publicBaseUrl).toBe('http://localhost:8080');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://ws.example.com/' }).publicBaseUrl).toBe('https://ws.example.com');
  });

  it('accepts good values of every variable', () => {
    const config = loadConfig({
      PORT: '0',
      HOST: '::',
      DATA_DIR: scratch,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/ws',
      REDIS_URL: 'redis://127.0.0.1:6379',
      PUBLIC_BASE_URL: 'https://ws.example.com',
      SMTP_URL: 'smtp://mail.example.com:25',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1s, 500ms,2m',
      WEBHOOK_TIMEOUT: '2500ms',
      RATE_LIMIT_PER_MINUTE: '50',
      TRUST_PROXY: 'yes',
      LOG_LEVEL: 'debug',
      AUDIT_RETENTION_DAYS: '36500',
      DELETION_BATCH_SIZE: '10000',
    });
    expect(config).toMatchObject({
      port: 0,
      host: '::',
      dataDir: scratch,
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/ws',
      redisUrl: 'redis://127.0.0.1:6379',
      publicBaseUrl: 'https://ws.example.com',
      smtpUrl: 'smtp://mail.example.com:25',
      webhookAllowPrivateNetworks: true,
      webhookRetrySchedule: [1000, 500, 120_000],
      webhookTimeoutMs: 2500,
      rateLimitPerMinute: 50,
      trustProxy: true,
      logLevel: 'debug',
      auditRetentionDays: 36_500,
      deletionBatchSize: 10_000,
    });
    expect(loadConfig({ HOST: 'localhost' }).host).toBe('localhost');
    expect(loadConfig({ DATA_DIR: path.join(scratch, 'created-later') }).dataDir).toBe(path.join(scratch, 'created-later'));
  });

  it('parses durations with units, a bare number as seconds, and refuses anything else', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('30')).toBe(30_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('7d')).toBe(604_800_000);
    expect(parseDuration('2 weeks')).toBeNull();
    expect(parseDuration('')).toBeNull();
  });

  it('./bin/workspace serve with a bad PORT exits non-zero and names PORT on stderr', async () => {
    const res = await runCli(['serve'], { DATA_DIR: scratch, PORT: 'eighty' });
    expect(res.code).not.toBe(0);
    expect(res.code).not.toBeNull();
    expect(res.stderr).toContain('PORT');
    expect(res.stderr).toContain('eighty');
    expect(res.stdout).toBe('');
  });
});
