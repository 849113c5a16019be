import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { request, type Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertPublicWebhookUrl,
  createGuardedAgent,
  isPublicAddress,
  nonPublicReason,
  resolvePublicAddress,
  SsrfBlockedError,
  type Resolver,
} from '../../src/lib/ssrf.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

// [url, the address the guard names, or null when the URL passes creation]
const URL_TABLE: [string, string | null][] = [
  // IPv4 literals in every encoding the WHATWG parser accepts; it normalises them to dotted decimal.
  ['https://127.0.0.1/hook', '127.0.0.1'],
  ['https://2130706433/', '127.0.0.1'], // decimal
  ['https://017700000001/', '127.0.0.1'], // octal, one number
  ['https://0177.0.0.1/', '127.0.0.1'], // octal
  ['https://0x7f.0.0.1/', '127.0.0.1'], // hex
  ['https://0x7f000001/', '127.0.0.1'], // hex, one number
  ['https://127.1/', '127.0.0.1'], // short form
  ['https://0x7f.1/', '127.0.0.1'], // short hex
  ['https://%31%32%37.0.0.1/', '127.0.0.1'], // percent-encoded
  ['https://127.0.0.1./', '127.0.0.1'], // trailing dot
  ['https://0/', '0.0.0.0'],
  ['https://10.0.0.5/', '10.0.0.5'],
  ['https://100.64.0.1/', '100.64.0.1'],
  ['https://169.254.169.254/latest/meta-data/', '169.254.169.254'],
  ['https://172.16.0.1/', '172.16.0.1'],
  ['https://172.31.255.255/', '172.31.255.255'],
  ['https://192.0.0.8/', '192.0.0.8'],
  ['https://192.0.2.1/', '192.0.2.1'],
  ['https://192.88.99.1/', '192.88.99.1'],
  ['https://0300.0250.0.1/', '192.168.0.1'], // octal private
  ['https://198.19.255.255/', '198.19.255.255'],
  ['https://198.51.100.7/', '198.51.100.7'],
  ['https://203.0.113.9/', '203.0.113.9'],
  ['https://224.0.0.1/', '224.0.0.1'],
  ['https://240.0.0.1/', '240.0.0.1'],
  ['https://255.255.255.255/', '255.255.255.255'],
  // IPv6 literals (bracketed), including the forms that embed an IPv4 address.
  ['https://[::1]/', '::1'],
  ['https://[0:0:0:0:0:0:0:1]/', '::1'],
  ['https://[::]/', '::'],
  ['https://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
  ['https://[::ffff:7f00:1]/', '::ffff:7f00:1'],
  ['https://[::ffff:10.1.2.3]/', '::ffff:a01:203'],
  ['https://[::127.0.0.1]/', '::7f00:1'], // IPv4-compatible
  ['https://[::8.8.8.8]/', '::808:808'], // IPv4-compatible is deprecated whatever it embeds
  ['https://[64:ff9b::10.0.0.1]/', '64:ff9b::a00:1'], // NAT64
  ['https://[2002:7f00:1::]/', '2002:7f00:1::'], // 6to4 of 127.0.0.1
  ['https://[2002:c0a8:101::1]/', '2002:c0a8:101::1'], // 6to4 of 192.168.1.1
  ['https://[fc00::1]/', 'fc00::1'],
  ['https://[fd12:3456::1]/', 'fd12:3456::1'],
  ['https://[fe80::1]/', 'fe80::1'],
  ['https://[ff02::1]/', 'ff02::1'],
  ['https://[2001:db8::1]/', '2001:db8::1'],
  ['https://[100::1]/', '100::1'],
  // Local names.
  ['https://localhost/', 'localhost'],
  ['https://LOCALHOST./', 'localhost.'],
  ['https://api.localhost/', 'api.localhost'],
  // Public addresses, neighbours of the refused ranges, and host names (checked at delivery instead).
  ['https://8.8.8.8/', null],
  ['https://1.1.1.1/hook', null],
  ['https://172.32.0.1/', null],
  ['https://100.128.0.1/', null],
  ['https://169.255.0.1/', null],
  ['https://198.20.0.1/', null],
  ['https://223.255.255.255/', null],
  ['https://[2606:4700:4700::1111]/', null],
  ['https://[::ffff:8.8.8.8]/', null],
  ['https://[64:ff9b::8.8.8.8]/', null],
  ['https://[2002:808:808::1]/', null],
  ['https://example.com/hooks', null],
  ['https://127.0.0.1.nip.io/', null],
  ['https://localhost.example.com/', null],
];

describe('assertPublicWebhookUrl', () => {
  it.each(URL_TABLE)('%s -> %s', (text, refused) => {
    const url = new URL(text);
    if (refused === null) {
      expect(() => assertPublicWebhookUrl(url, false)).not.toThrow();
    } else {
      let thrown: unknown;
      try {
        assertPublicWebhookUrl(url, false);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(SsrfBlockedError);
      expect((thrown as SsrfBlockedError).target).toBe(refused);
      expect((thrown as Error).message).toMatch(/^target address .+ is not public \(.+\)$/);
    }
    // The operator switch lets everything through.
    expect(() => assertPublicWebhookUrl(url, true)).not.toThrow();
  });

  it('names the embedded IPv4 address and its range', () => {
    expect(nonPublicReason('::ffff:7f00:1')).toBe('IPv4-mapped 127.0.0.1: loopback');
    expect(nonPublicReason('2002:c0a8:101::1')).toBe('6to4 192.168.1.1: private network');
    expect(nonPublicReason('64:ff9b::a9fe:a9fe')).toBe('NAT64 169.254.169.254: link-local');
  });
});

describe('address classification', () => {
  it.each([
    ['10.255.255.255', false],
    ['11.0.0.0', true],
    ['100.63.255.255', true],
    ['100.127.255.255', false],
    ['126.255.255.255', true],
    ['172.15.255.255', true],
    ['192.0.1.0', true],
    ['192.169.0.0', true],
    ['198.17.255.255', true],
    ['223.255.255.255', true],
    ['239.255.255.255', false],
    ['2001:4860:4860::8888', true],
    ['2001::1', false], // Teredo, inside IETF protocol assignments
    ['3fff::1', false],
    ['febf::1', false],
    ['fec0::1', false],
    ['4000::1', false], // outside global unicast 2000::/3
    ['::ffff:0.0.0.0', false],
    ['fe80::1%eth0', false],
    ['[::1]', false],
  ])('%s public=%s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });

  it('refuses to classify something that is not an IP address', () => {
    expect(() => nonPublicReason('example.com')).toThrow(TypeError);
    expect(() => nonPublicReason('0177.0.0.1')).toThrow(TypeError);
  });
});

const fakeResolver =
  (table: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('resolvePublicAddress', () => {
  const resolver = fakeResolver({
    'public.test': ['93.184.216.34', '2606:2800:220:1::1'],
    'mixed.test': ['93.184.216.34', '10.0.0.5'],
    'mapped.test': ['::ffff:192.168.0.1'],
  });

  it('returns every address when all are public', async () => {
    await expect(resolvePublicAddress('public.test', false, resolver)).resolves.toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
  });

  it('refuses the whole name when any one address is not public', async () => {
    await expect(resolvePublicAddress('mixed.test', false, resolver)).rejects.toThrow(
      'target address 10.0.0.5 of mixed.test is not public (private network)',
    );
    await expect(resolvePublicAddress('mapped.test', false, resolver)).rejects.toThrow(/IPv4-mapped 192\.168\.0\.1/);
    await expect(resolvePublicAddress('mixed.test', true, resolver)).resolves.toHaveLength(2);
  });

  it('checks IP literals without asking DNS', async () => {
    await expect(resolvePublicAddress('[::1]', false, resolver)).rejects.toThrow('target address ::1 is not public (loopback)');
    await expect(resolvePublicAddress('8.8.8.8', false, resolver)).resolves.toEqual([{ address: '8.8.8.8', family: 4 }]);
  });

  it('uses the system resolver by default: localhost and legacy numeric names resolve to loopback', async () => {
    await expect(resolvePublicAddress('localhost', false)).rejects.toThrow(/is not public \(loopback\)/);
    // getaddrinfo reads 0177.0.0.1 as octal (inet_aton): the answer is checked, whatever the spelling.
    await expect(resolvePublicAddress('0177.0.0.1', false)).rejects.toThrow('target address 127.0.0.1 of 0177.0.0.1 is not public');
  });
});

describe('createGuardedAgent against a local HTTPS server', () => {
  let dir: string;
  let ca: Buffer;
  let server: https.Server;
  let port: number;
  const seen: { servername: string | false | null; path: string }[] = [];
  let connections = 0;
  const agents: Agent[] = [];
  const resolver = fakeResolver({ 'hooks.test': ['127.0.0.1'], 'wrong.test': ['127.0.0.1'], 'rebind.test': ['93.184.216.34', '10.0.0.5'] });

  function agent(options: Parameters<typeof createGuardedAgent>[0]): Agent {
    const created = createGuardedAgent({ ca, resolver, ...options });
    agents.push(created);
    return created;
  }

  async function errorOf(promise: Promise<unknown>): Promise<Error> {
    try {
      await promise;
    } catch (error) {
      return error as Error;
    }
    throw new Error('expected the request to fail');
  }

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-ssrf-'));
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1',
      '-subj', '/CN=hooks.test', '-addext', 'subjectAltName=DNS:hooks.test,DNS:localhost,IP:127.0.0.1',
    ], { stdio: 'ignore' });
    ca = fs.readFileSync(path.join(dir, 'cert.pem'));
    server = https.createServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: ca }, (req, res) => {
      seen.push({ servername: (req.socket as TLSSocket).servername, path: req.url ?? '' });
      res.end('ok');
    });
    server.on('secureConnection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.close()));
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a loopback IP literal when private networks are not allowed', async () => {
    const before = seen.length;
    const error = await errorOf(request(`https://127.0.0.1:${port}/literal`, { dispatcher: agent({ allowPrivate: false }) }));
    expect(error).toBeInstanceOf(SsrfBlockedError);
    expect(error.message).toBe('target address 127.0.0.1 is not public (loopback)');
    expect(seen.length).toBe(before);
  });

  it('refuses a name that resolves to loopback, and a name with any private answer', async () => {
    const guarded = agent({ allowPrivate: false });
    const local = await errorOf(request(`https://hooks.test:${port}/name`, { dispatcher: guarded }));
    expect(local.message).toBe('target address 127.0.0.1 of hooks.test is not public (loopback)');
    const rebind = await errorOf(request(`https://rebind.test:${port}/`, { dispatcher: guarded }));
    expect(rebind.message).toBe('target address 10.0.0.5 of rebind.test is not public (private network)');
    // The real resolver: localhost answers with loopback addresses.
    const systemAgent = createGuardedAgent({ allowPrivate: false, ca });
    agents.push(systemAgent);
    const system = await errorOf(request(`https://localhost:${port}/`, { dispatcher: systemAgent }));
    expect(system).toBeInstanceOf(SsrfBlockedError);
    expect(system.message).toMatch(/^target address (127\.0\.0\.1|::1) of localhost is not public \(loopback\)$/);
    expect(seen.filter((s) => s.path === '/name')).toEqual([]);
  });

  it('reaches the server when private networks are allowed, over one pooled keep-alive connection', async () => {
    // One connection per origin, so the second request waits for the first socket instead of racing it.
    const open = agent({ allowPrivate: true, connections: 1 });
    const before = connections;
    for (const n of [1, 2]) {
      const res = await request(`https://127.0.0.1:${port}/allowed/${n}`, { dispatcher: open });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('ok');
    }
    expect(connections - before).toBe(1);
  });

  it('connects to the checked address while TLS verifies the host name (SNI = host name)', async () => {
    const open = agent({ allowPrivate: true });
    // hooks.test exists only in the guard's resolver: reaching the server proves the socket used its answer.
    const res = await request(`https://hooks.test:${port}/pinned`, { dispatcher: open });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    expect(seen.find((s) => s.path === '/pinned')?.servername).toBe('hooks.test');
    // Same address, but a name the certificate does not cover: the TLS check still applies.
    const mismatch = await errorOf(request(`https://wrong.test:${port}/mismatch`, { dispatcher: open }));
    expect((mismatch as NodeJS.ErrnoException).code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    expect(seen.some((s) => s.path === '/mismatch')).toBe(false);
  });

  it('rejects a certificate it does not trust', async () => {
    const untrusting = createGuardedAgent({ allowPrivate: true, resolver });
    agents.push(untrusting);
    const error = await errorOf(request(`https://hooks.test:${port}/untrusted`, { dispatcher: untrusting }));
    expect((error as NodeJS.ErrnoException).code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/);
  });
});

describe.each(testDialects())('POST /v1/webhooks with private networks refused (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;

  beforeAll(async () => {
    env = await createTestEnv(dialect, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' } });
    org = await env.createOrg();
  });
  afterAll(async () => env?.close());

  const refused = [
    ['https://127.0.0.1/hook', '127.0.0.1 is loopback'],
    ['https://2130706433/', '127.0.0.1 is loopback'],
    ['https://0x7f.0.0.1/', '127.0.0.1 is loopback'],
    ['https://0300.0250.0.1/', '192.168.0.1 is private network'],
    ['https://169.254.169.254/latest/meta-data/', '169.254.169.254 is link-local'],
    ['https://[::ffff:127.0.0.1]/', '::ffff:7f00:1 is IPv4-mapped 127.0.0.1: loopback'],
    ['https://[fd00::1]/', 'fd00::1 is unique local'],
    ['https://localhost:8443/', 'localhost is loopback'],
  ] as const;

  it.each(refused)('refuses %s', async (url, why) => {
    const res = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url, events: ['project.created'] } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toEqual([{ field: 'url', message: `must point to a public address; ${why}` }]);
    const list = await env.request('GET', '/v1/webhooks', { key: org.ownerKey });
    expect(list.body.data).toEqual([]);
  });

  it('accepts a public host name', async () => {
    const res = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://hooks.example.com/in', events: ['project.created'] } });
    expect(res.status).toBe(201);
    expect(res.body.url).toBe('https://hooks.example.com/in');
  });
});
