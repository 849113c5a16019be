import { errorResponseName, errorResponses, errorStatuses, sharedHeaders, sharedParameters } from './components.js';
import { ErrorResponse } from '../../schemas/common.js';
import { operationDocs } from './operations.js';
import { webhookOperations } from './webhooks.js';

// The document is plain JSON handed over by @fastify/swagger; typing every OpenAPI object buys nothing here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export interface DocumentOptions {
  publicBaseUrl: string;
}

/** Component names taken so far, with what each schema is (to refuse two different ones of one name). */
type Names = Map<string, { shape: string; size: number }>;

const titleOf = (name: string, schema: Json): string => (typeof schema.title === 'string' ? schema.title : name);

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** Keywords our validator understands (src/http/validation.ts) that are not JSON Schema: never published. */
const PRIVATE_KEYWORDS = ['patternMessage'];

export const TAGS = [
  { name: 'Projects', description: 'The units of work of an organisation.' },
  { name: 'Users', description: 'Members of the organisation and their roles; a new member is invited by e-mail.' },
  { name: 'Invitations', description: 'Accepting the link an invitation e-mail carries (no API key: the token is the credential).' },
  { name: 'Webhooks', description: 'Subscriptions that receive signed events (see the `webhooks` section for each event).' },
  { name: 'Webhook deliveries', description: 'What was sent to a subscription, every attempt, and replays.' },
  { name: 'Webhook events', description: 'What the service POSTs to a subscription: verify `X-Service-Signature` first.' },
  { name: 'Workflows', description: 'Workflows of a project, their steps, and their runs.' },
  { name: 'Tasks', description: 'To-dos and approvals, created alone or by a run; assigning one fires `task.assigned`.' },
  { name: 'Events', description: 'Every event of the organisation for EVENT_RETENTION, for reconciling missed deliveries.' },
  { name: 'Organization', description: "The key's organisation and its state." },
  { name: 'Audit log', description: 'Every change, whoever made it and through whichever door (admins and owners).' },
  { name: 'API keys', description: 'Keys of the organisation: a key creates keys only for its own user, never wider than itself.' },
  { name: 'Exports', description: 'A ZIP of the workspace\'s data, built in the background (admins and owners).' },
  {
    name: 'Extensions',
    description:
      'Operations beyond the published specification (each also carries `x-extension: true`). They follow the same ' +
      'rules: errors, pagination, permissions and idempotency.',
  },
];

/**
 * Finishes the document @fastify/swagger builds from the route schemas: what a route schema cannot say by
 * itself. Servers come from PUBLIC_BASE_URL; the webhooks section lists the events; error responses and
 * headers become shared components with the contract's codes as examples; every schema with a `title`
 * becomes a named component (generated clients name their types after it); an `anyOf` of single strings
 * becomes one `enum`; keywords only our validator knows are dropped. Throws when two different schemas
 * claim the same title, so a clash fails the build of the document instead of hiding a type.
 */
export function finishDocument(document: Json, options: DocumentOptions): Json {
  const out: Json = {
    openapi: document.openapi,
    info: document.info,
    servers: [{ url: options.publicBaseUrl, description: 'This deployment (its PUBLIC_BASE_URL).' }],
    security: document.security,
    tags: TAGS,
    paths: document.paths,
  };
  const webhooks = webhookOperations();
  if (Object.keys(webhooks).length > 0) out.webhooks = webhooks;
  out.components = {
    securitySchemes: document.components?.securitySchemes,
    schemas: {},
    responses: errorResponses(),
    parameters: sharedParameters(),
    headers: sharedHeaders(),
  };

  const named: Names = new Map();
  const definitions: Json = { ...document.components?.schemas };
  // @fastify/swagger names the schemas it met by `$id` `def-0`, `def-1`...: they take their title instead.
  const renamed = new Map<string, string>();
  for (const [name, schema] of Object.entries<Json>(definitions)) {
    renamed.set(`#/components/schemas/${name}`, `#/components/schemas/${titleOf(name, schema)}`);
  }
  const clean = (node: Json, isTop = false): Json => cleanSchemas(node, renamed, out.components.schemas, named, isTop);
  // Error responses are shared components (components.ts), so the routes' copies of the error schema are gone.
  const { $id: _id, ...errorSchema } = JSON.parse(JSON.stringify(ErrorResponse));
  definitions['Error'] = errorSchema;
  for (const [name, schema] of Object.entries<Json>(definitions)) {
    const title = titleOf(name, schema);
    const cleaned = clean(schema, true);
    if (claim(named, title, cleaned)) out.components.schemas[title] = cleaned;
  }

  for (const [path, item] of Object.entries<Json>(out.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) item[method] = finishOperation(operation, method, path);
    }
  }

  out.paths = clean(out.paths, true);
  if (out.webhooks) out.webhooks = clean(out.webhooks, true);
  out.components.schemas = sortKeys(out.components.schemas);
  return out;
}

/** Operation ids, summaries, error responses, examples, headers: the parts a route schema leaves out. */
function finishOperation(operation: Json, method: string, path: string): Json {
  const where = `${method.toUpperCase()} ${path}`;
  const docs = operationDocs[operation.operationId as string];
  if (!docs) throw new Error(`OpenAPI: ${where} has no entry in operations.ts (operationId ${operation.operationId ?? 'missing'})`);
  const authenticated = !(Array.isArray(operation.security) && operation.security.length === 0);
  // A new array: the route plugins share one tags array between their routes.
  if (operation['x-extension'] === true && !operation.tags.includes('Extensions')) operation.tags = [...operation.tags, 'Extensions'];

  if (operation.requestBody) {
    const media = operation.requestBody.content['application/json'];
    if (docs.request === undefined) throw new Error(`OpenAPI: ${where} takes a body but has no request example`);
    media.example = docs.request;
    operation.requestBody.required = true;
  }
  const post = method === 'post';
  if (authenticated && post) {
    operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/IdempotencyKey' }];
  }

  const responses: Json = {};
  for (const [status, response] of Object.entries<Json>(operation.responses)) {
    if (!status.startsWith('2')) continue;
    response.description = docs.response;
    response.headers = successHeaders(authenticated, post);
    const media = response.content?.['application/json'];
    if (media) {
      if (docs.example === undefined) throw new Error(`OpenAPI: ${where} answers a body but has no response example`);
      media.example = docs.example;
    }
    responses[status] = response;
  }
  const statuses = new Set(Object.keys(operation.responses).filter((s) => !s.startsWith('2')));
  const hasPathId = (operation.parameters ?? []).some((p: Json) => p.in === 'path');
  for (const status of errorStatuses({ authenticated, post, hasBody: Boolean(operation.requestBody), hasPathId })) statuses.add(status);
  for (const status of [...statuses].sort()) {
    const name = errorResponseName(status);
    if (!name) throw new Error(`OpenAPI: ${where} lists ${status}, which has no shared error response`);
    responses[status] = { $ref: `#/components/responses/${name}` };
  }
  operation.responses = responses;
  // A reader's order: what it is, what it takes, what it answers; vendor keys last.
  const order = ['operationId', 'summary', 'description', 'tags', 'security', 'parameters', 'requestBody', 'responses'];
  const keys = [...order.filter((key) => key in operation), ...Object.keys(operation).filter((key) => !order.includes(key))];
  return Object.fromEntries(keys.map((key) => [key, operation[key]]));
}

function successHeaders(authenticated: boolean, post: boolean): Json {
  const headers: Json = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
  if (authenticated) {
    headers['X-RateLimit-Limit'] = { $ref: '#/components/headers/RateLimitLimit' };
    headers['X-RateLimit-Remaining'] = { $ref: '#/components/headers/RateLimitRemaining' };
  }
  if (post && authenticated) headers['Idempotent-Replayed'] = { $ref: '#/components/headers/IdempotentReplayed' };
  return headers;
}

/**
 * Records `schema` under `title`; true when it should be stored (first of its name, or the same schema with
 * more annotation: @fastify/swagger moves a parameter schema's description onto the parameter).
 */
function claim(named: Names, title: string, schema: Json): boolean {
  const shape = canonicalJson(schema, true);
  const size = canonicalJson(schema, false).length;
  const existing = named.get(title);
  if (existing !== undefined && existing.shape !== shape) throw new Error(`OpenAPI: two different schemas are titled ${title}`);
  if (existing !== undefined && existing.size >= size) return false;
  named.set(title, { shape, size });
  return true;
}

/** Walks any part of the document, rewriting schemas in place and returning the node to use. */
function cleanSchemas(node: Json, renamed: Map<string, string>, schemas: Json, named: Names, isTop: boolean): Json {
  if (Array.isArray(node)) return node.map((child) => cleanSchemas(child, renamed, schemas, named, false));
  if (node === null || typeof node !== 'object') return node;
  for (const keyword of PRIVATE_KEYWORDS) delete node[keyword];
  if (typeof node.$ref === 'string' && renamed.has(node.$ref)) node.$ref = renamed.get(node.$ref);
  for (const key of Object.keys(node)) {
    // Examples are data, not schemas: a `title` inside one is a value.
    if (key === 'example' || key === 'examples' || key === 'x-examples') continue;
    node[key] = cleanSchemas(node[key], renamed, schemas, named, false);
  }
  collapseEnum(node);
  if (!isTop && typeof node.title === 'string' && isSchema(node)) {
    const title = node.title as string;
    if (claim(named, title, node)) schemas[title] = node;
    return { $ref: `#/components/schemas/${title}` };
  }
  return node;
}

function isSchema(node: Json): boolean {
  return 'type' in node || 'anyOf' in node || 'oneOf' in node || 'allOf' in node || 'enum' in node || 'const' in node;
}

/** `anyOf: [{type: string, enum: [a]}, {type: string, enum: [b]}]` (TypeBox's union of literals) -> `enum: [a, b]`. */
function collapseEnum(node: Json): void {
  const options = node.anyOf;
  if (!Array.isArray(options) || options.length < 2) return;
  const single = (o: Json) =>
    o && typeof o === 'object' && o.type === 'string' && Array.isArray(o.enum) && o.enum.length === 1 && Object.keys(o).length === 2;
  if (!options.every(single)) return;
  delete node.anyOf;
  node.type = 'string';
  node.enum = options.map((o: Json) => o.enum[0]);
}

const ANNOTATIONS = new Set(['description', 'example', 'examples']);

/** Key-order independent JSON of a schema, without its annotations when only the shape counts. */
function canonicalJson(value: Json, shapeOnly: boolean): string {
  return JSON.stringify(value, (key, v) => {
    if (shapeOnly && ANNOTATIONS.has(key)) return undefined;
    return v && typeof v === 'object' && !Array.isArray(v) ? sortKeys(v) : v;
  });
}

function sortKeys(object: Json): Json {
  return Object.fromEntries(Object.keys(object).sort().map((key) => [key, object[key]]));
}
