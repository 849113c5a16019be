import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMITTED_BASE_URL, renderTypes } from '../../scripts/openapi-render.mjs';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const committedText = fs.readFileSync(path.join(root, 'docs/openapi.json'), 'utf8');
const REGENERATE = 'the API changed: run `npm run openapi` and commit docs/openapi.json and src/client/openapi.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Every operation of the document as [method, path, operation]. */
function operationsOf(doc: Json): [string, string, Json][] {
  return Object.entries<Json>(doc.paths).flatMap(([p, item]) =>
    METHODS.filter((m) => item[m]).map((m) => [m, p, item[m]] as [string, string, Json]),
  );
}

/** Follows a local `$ref` (one level is all the document uses for schemas and responses). */
function deref(doc: Json, node: Json): Json {
  if (!node?.$ref) return node;
  const target = (node.$ref as string).replace(/^#\//, '').split('/').reduce((at: Json, part) => at?.[part.replace(/~1/g, '/')], doc);
  expect(target, node.$ref).toBeDefined();
  return deref(doc, target);
}

/** Every key anywhere in the document, to find keywords that must not be published. */
function allKeys(node: Json, keys = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((child) => allKeys(child, keys));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      keys.add(key);
      if (key !== 'example' && key !== 'examples') allKeys(value, keys);
    }
  }
  return keys;
}

/** The first line where `actual` and `committed` differ, both sides shown; null when they are equal. */
function firstDifference(actual: string, committed: string): string | null {
  if (actual === committed) return null;
  const a = actual.split('\n');
  const c = committed.split('\n');
  const line = a.findIndex((text, i) => text !== c[i]);
  const at = line === -1 ? a.length : line;
  return `line ${at + 1}: now ${JSON.stringify(a[at] ?? '<end>')}, committed ${JSON.stringify(c[at] ?? '<end>')}`;
}

// The document comes from the route schemas alone, whatever the database: one dialect is enough.
describe('OpenAPI document (sqlite)', () => {
  let env: TestEnv;
  let doc: Json;

  beforeAll(async () => {
    env = await createTestEnv('sqlite', { env: { PUBLIC_BASE_URL: COMMITTED_BASE_URL } });
    const res = await env.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(async () => env?.close());

  const specRoutes: [string, string][] = [
    ['get', '/v1/projects'],
    ['post', '/v1/projects'],
    ['get', '/v1/projects/{id}'],
    ['put', '/v1/projects/{id}'],
    ['delete', '/v1/projects/{id}'],
    ['get', '/v1/users'],
    ['post', '/v1/users'],
    ['get', '/v1/users/{id}'],
    ['put', '/v1/users/{id}'],
    ['get', '/v1/webhooks'],
    ['post', '/v1/webhooks'],
    ['delete', '/v1/webhooks/{id}'],
    ['post', '/invitations/{token}/accept'],
  ];

  it('is the committed docs/openapi.json, byte for byte once pretty-printed', () => {
    expect(firstDifference(`${JSON.stringify(doc, null, 2)}\n`, committedText), REGENERATE).toBeNull();
  });

  it("the committed client types are openapi-typescript's output for the committed document", async () => {
    const committedTypes = fs.readFileSync(path.join(root, 'src/client/openapi.ts'), 'utf8');
    expect(firstDifference(await renderTypes(committedText), committedTypes), REGENERATE).toBeNull();
  });

  it('names this deployment as its server (PUBLIC_BASE_URL)', async () => {
    expect(doc.servers).toEqual([{ url: COMMITTED_BASE_URL, description: expect.any(String) }]);
    const other = await createTestEnv('sqlite', { env: { PUBLIC_BASE_URL: 'https://workspace.acme.test/' } });
    try {
      const res = await other.request('GET', '/openapi.json');
      expect(res.body.servers[0].url).toBe('https://workspace.acme.test');
    } finally {
      await other.close();
    }
  });

  it('is OpenAPI 3.1 with bearer authentication and a licence', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.license).toEqual({ name: 'MIT', url: `${COMMITTED_BASE_URL}/docs/license` });
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('publishes no keyword only our validator knows (patternMessage)', () => {
    const keys = allKeys(doc);
    expect(keys.has('patternMessage')).toBe(false);
    // The check itself still speaks: the message comes from the validator, not from the document.
    expect(JSON.stringify(doc)).not.toContain('must be an absolute https:// URL');
  });

  it('documents every specified route', () => {
    const documented = operationsOf(doc).map(([m, p]) => `${m} ${p}`);
    for (const [method, p] of specRoutes) expect(documented).toContain(`${method} ${p}`);
  });

  it('gives every operation a unique camelCase operationId, a summary and a described tag', () => {
    const ids = operationsOf(doc).map(([, , op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = new Set(doc.tags.map((t: Json) => t.name));
    for (const [method, p, op] of operationsOf(doc)) {
      expect(op.operationId, `${method} ${p}`).toMatch(/^[a-z][A-Za-z]+$/);
      expect(op.summary?.length, `${method} ${p}`).toBeGreaterThan(5);
      for (const tag of op.tags) expect(tags.has(tag), `${method} ${p} tag ${tag}`).toBe(true);
    }
    expect(ids).toEqual(expect.arrayContaining(['listProjects', 'createProject', 'getProject', 'updateProject', 'deleteProject']));
  });

  it('gives every operation an example request and response that fit its schemas', () => {
    for (const [method, p, op] of operationsOf(doc)) {
      if (op.requestBody) {
        const media = op.requestBody.content['application/json'];
        expect(media.example, `${method} ${p} request example`).toBeDefined();
        const schema = deref(doc, media.schema);
        expect(schema.additionalProperties, `${method} ${p} refuses unknown fields`).toBe(false);
        for (const field of schema.required ?? []) expect(media.example, `${method} ${p}`).toHaveProperty(field);
      }
      const [status, success] = Object.entries<Json>(op.responses).find(([code]) => code.startsWith('2'))!;
      expect(success.description, `${method} ${p}`).not.toBe('Default Response');
      // A download answers a file: its media type is named, and there is no JSON example to give.
      if (status !== '204' && !success.content['application/json']) expect(Object.keys(success.content), `${method} ${p}`).toEqual(['application/zip']);
      else if (status !== '204') {
        const media = success.content['application/json'];
        expect(media.example, `${method} ${p} response example`).toBeDefined();
        for (const field of deref(doc, media.schema).required ?? []) expect(media.example, `${method} ${p}`).toHaveProperty(field);
      }
    }
  });

  it("documents each operation's error responses with the contract's codes", () => {
    for (const [method, p, op] of operationsOf(doc)) {
      const authenticated = !(Array.isArray(op.security) && op.security.length === 0);
      const expected = ['500', '503', ...(authenticated ? ['400', '401', '403', '429'] : [])];
      if (op.requestBody) expected.push('400', '413', '415');
      if (p.includes('{')) expected.push('404');
      if (authenticated && method === 'post') expected.push('409', '422');
      for (const status of expected) expect(op.responses[status], `${method} ${p} ${status}`).toBeDefined();
      for (const [status, ref] of Object.entries<Json>(op.responses)) {
        if (status.startsWith('2')) continue;
        const response = deref(doc, ref);
        const media = response.content['application/json'];
        expect(deref(doc, media.schema).title).toBe('Error');
        for (const [code, example] of Object.entries<Json>(media.examples)) {
          expect(example.value.error.code).toBe(code);
          expect(response.description).toContain(`\`${code}\``);
        }
      }
    }
    const codes = Object.values<Json>(doc.components.responses).flatMap((r) => Object.keys(r.content['application/json'].examples));
    for (const code of ['invalid_json', 'validation_failed', 'unauthorized', 'forbidden', 'workspace_read_only', 'not_found', 'conflict',
      'invitation_expired', 'payload_too_large', 'unsupported_media_type', 'idempotency_key_reused', 'rate_limited', 'internal_error']) {
      expect(codes).toContain(code);
    }
    expect(doc.components.responses.RateLimited.headers['Retry-After']).toBeDefined();
  });

  it('offers Idempotency-Key on every authenticated POST', () => {
    for (const [method, p, op] of operationsOf(doc)) {
      if (method !== 'post' || p.startsWith('/invitations')) continue;
      expect(op.parameters.map((param: Json) => deref(doc, param).name), p).toContain('Idempotency-Key');
    }
  });

  it('tags and marks the operations beyond the specification, and only those', () => {
    for (const [method, p, op] of operationsOf(doc)) {
      const inSpec = specRoutes.some(([m, r]) => m === method && r === p);
      expect(op['x-extension'] === true, `${method} ${p}`).toBe(!inSpec);
      expect(op.tags.includes('Extensions'), `${method} ${p}`).toBe(!inSpec);
    }
  });

  it('names the shared schemas as components, and each is used', () => {
    const text = JSON.stringify({ ...doc, components: { ...doc.components, schemas: {} } });
    for (const name of ['Project', 'ProjectListItem', 'User', 'Webhook', 'CreatedWebhook', 'Delivery', 'Error', 'ProjectStatus', 'Role']) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    for (const name of Object.keys(doc.components.schemas)) {
      expect(text.includes(`#/components/schemas/${name}"`) || JSON.stringify(doc.components.schemas).includes(`#/components/schemas/${name}"`), name).toBe(true);
    }
    expect(deref(doc, doc.paths['/v1/projects'].get.parameters.find((p: Json) => p.name === 'status').schema).enum).toEqual(['active', 'archived', 'draft']);
  });

  it('documents the paging parameters of the lists', () => {
    for (const p of ['/v1/projects', '/v1/users', '/v1/webhooks']) {
      const names = doc.paths[p].get.parameters.map((param: Json) => param.name);
      expect(names).toEqual(expect.arrayContaining(['limit', 'cursor']));
    }
  });

  it('hides the service routes (health, metrics, the document itself, the invitation page, Stripe)', () => {
    for (const p of ['/healthz', '/readyz', '/openapi.json', '/metrics', '/invitations/{token}', '/billing/stripe/webhook']) {
      expect(doc.paths[p], p).toBeUndefined();
    }
  });
});
