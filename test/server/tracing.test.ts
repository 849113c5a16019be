import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseTraceparent } from '../../src/tracing/tracing.js';
import { cliJson, createCliWorld, startServe, type ServeProcess } from '../helpers/cli.js';
import { makeSelfSignedCertificate, startHttpsReceiver, waitFor, type HttpsReceiver, type TestCertificate } from '../helpers/https-receiver.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { testDialects, type TestDialect } from '../helpers/test-env.js';

const SERVER = 2;
const CLIENT = 3;

let cert: TestCertificate;
let receiver: HttpsReceiver;
beforeAll(async () => {
  cert = makeSelfSignedCertificate();
  receiver = await startHttpsReceiver(cert);
});
afterAll(async () => {
  await receiver.close();
});

/** A world with an organisation, a `serve` and a subscription on the local HTTPS receiver. */
async function startWorld(dialect: TestDialect, env: Record<string, string>, hookPath: string) {
  const world = await createCliWorld(dialect);
  const created = await cliJson(['org', 'create', '--name', 'Traced', '--owner-email', 'owner@example.com'], world.env);
  const serve = await startServe({ ...world.env, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', NODE_EXTRA_CA_CERTS: cert.certFile, ...env });
  const key = created.api_key.key as string;
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${serve.address}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  expect((await call('POST', '/v1/webhooks', { url: receiver.url(hookPath), events: ['project.created', 'task.assigned'] })).status).toBe(201);
  return {
    world,
    serve,
    call,
    orgId: created.organization.id as string,
    ownerId: created.owner.id as string,
    async close(p: ServeProcess = serve) {
      p.child.kill('SIGTERM');
      await p.exited;
      await world.cleanup();
    },
  };
}

function deliveriesOf(hookPath: string, event: string) {
  return receiver.at(hookPath).filter((r) => r.headers['x-service-event'] === event);
}

describe.each(testDialects())('traces (%s)', (dialect: TestDialect) => {
  // Each dialect exercises one OTLP encoding; both are real exports decoded by the test's collector.
  const protocol = dialect === 'sqlite' ? 'http/protobuf' : 'http/json';
  let otlp: OtlpReceiver;
  let world: Awaited<ReturnType<typeof startWorld>>;
  const hookPath = `/traced-${dialect}`;
  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    world = await startWorld(dialect, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: protocol }, hookPath);
  });
  afterAll(async () => {
    await world?.close();
    await otlp?.close();
  });

  const spansOf = (traceId: string) => otlp.spans.filter((s) => s.traceId === traceId);

  it(`an incoming traceparent continues through the request, its queries and the delivery it causes (${protocol})`, async () => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const created = await world.call('POST', '/v1/projects', { name: 'Traced project' }, { traceparent: `00-${traceId}-${callerSpan}-01` });
    expect(created.status).toBe(201);

    const delivery = await waitFor('the delivery', () => deliveriesOf(hookPath, 'project.created').find((r) => r.body.toString().includes(created.body.id)));
    const sent = parseTraceparent(delivery.headers.traceparent as string);
    expect(sent, String(delivery.headers.traceparent)).not.toBeNull();
    expect(sent!.traceId).toBe(traceId);
    expect(sent!.flags).toBe(1);

    const request = await waitFor('the request span', () => spansOf(traceId).find((s) => s.name === 'POST /v1/projects'));
    expect(request).toMatchObject({ kind: SERVER, parentSpanId: callerSpan, serviceName: 'workspace-service' });
    expect(request.attributes['http.route']).toBe('/v1/projects');
    const deliverySpan = await waitFor('the delivery span', () => spansOf(traceId).find((s) => s.kind === CLIENT && s.name === 'POST webhook project.created'));
    // The receiver's parent is the delivery span itself.
    expect(deliverySpan.spanId).toBe(sent!.spanId);
    expect(deliverySpan.attributes).toMatchObject({
      'http.response.status_code': 200,
      'webhook.event': 'project.created',
      'webhook.delivery_id': delivery.headers['x-service-delivery-id'],
      'webhook.attempt': 1,
    });
    expect(String(deliverySpan.attributes['url.full'])).toBe(receiver.url(hookPath));
    if (dialect === 'postgres') {
      const queries = await waitFor('query spans', () => {
        const found = spansOf(traceId).filter((s) => s.attributes['db.system.name'] === 'postgresql');
        return found.length > 0 ? found : null;
      });
      expect(queries.some((q) => q.name === 'INSERT' || String(q.attributes['db.query.text']).includes('insert into events'))).toBe(true);
      // Parameterised: the project's name is not in any query text.
      expect(queries.every((q) => !String(q.attributes['db.query.text']).includes('Traced project'))).toBe(true);
    }
    expect(otlp.contentTypes.every((t) => t.startsWith(protocol === 'http/json' ? 'application/json' : 'application/x-protobuf'))).toBe(true);
  });

  it('a request without traceparent starts its own trace, and its delivery carries that trace', async () => {
    const created = await world.call('POST', '/v1/projects', { name: 'Fresh trace' });
    const delivery = await waitFor('the delivery', () => deliveriesOf(hookPath, 'project.created').find((r) => r.body.toString().includes(created.body.id)));
    const sent = parseTraceparent(delivery.headers.traceparent as string)!;
    const request = await waitFor('the request span', () => spansOf(sent.traceId).find((s) => s.name === 'POST /v1/projects'));
    expect(request.parentSpanId).toBe('');
  });

  it('a caller that sampled its trace out: nothing is recorded, yet the delivery still carries that trace', async () => {
    const traceId = randomBytes(16).toString('hex');
    const created = await world.call('POST', '/v1/projects', { name: 'Sampled out' }, { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-00` });
    const delivery = await waitFor('the delivery', () => deliveriesOf(hookPath, 'project.created').find((r) => r.body.toString().includes(created.body.id)));
    const sent = parseTraceparent(delivery.headers.traceparent as string)!;
    expect(sent.traceId).toBe(traceId);
    expect(sent.flags).toBe(0);
    // Spans are exported every second: two seconds later, still none of this trace (request, queries, delivery).
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(spansOf(traceId)).toEqual([]);
  });

  it('a workflow run step is a span, and the task.assigned it fires continues its trace', async () => {
    const project = await world.call('POST', '/v1/projects', { name: 'With a workflow' });
    const env = world.world.env;
    const steps = JSON.stringify([{ type: 'task', title: 'Review', assignee_id: world.ownerId }]);
    const workflow = await cliJson(['workflow', 'create', '--org', world.orgId, '--project', project.body.id, '--name', 'Review flow', '--steps', steps], env);
    const run = await cliJson(['workflow', 'run', workflow.id, '--org', world.orgId], env);
    const assigned = await waitFor('task.assigned', () => deliveriesOf(hookPath, 'task.assigned').find((r) => r.body.toString().includes(run.id)), 20_000);
    const sent = parseTraceparent(assigned.headers.traceparent as string)!;
    const step: ReceivedSpan = await waitFor('the run step span', () => spansOf(sent.traceId).find((s) => s.name === 'workflow run step'));
    expect(step.attributes).toMatchObject({ 'workflow.run.id': run.id, 'workspace.organization_id': world.orgId });
    await waitFor('the delivery span', () => spansOf(sent.traceId).find((s) => s.kind === CLIENT && s.spanId === sent.spanId));
  });

  it('probes are not traced', async () => {
    await fetch(`${world.serve.address}/healthz`);
    await fetch(`${world.serve.address}/readyz`);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(otlp.spans.filter((s) => String(s.attributes['url.path']).match(/^\/(healthz|readyz)/))).toEqual([]);
  });
});

describe('tracing off (the default)', () => {
  it('sends no traceparent, and an incoming one is not passed on', async () => {
    const world = await startWorld('sqlite', {}, '/untraced');
    try {
      const created = await world.call('POST', '/v1/projects', { name: 'Untraced' }, { traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01` });
      const delivery = await waitFor('the delivery', () => deliveriesOf('/untraced', 'project.created').find((r) => r.body.toString().includes(created.body.id)));
      expect(delivery.headers.traceparent).toBeUndefined();
    } finally {
      await world.close();
    }
  });
});

describe('tracing configuration', () => {
  const base = { DATA_DIR: '/tmp' };
  const refused = (env: Record<string, string>): ConfigError => {
    try {
      loadConfig({ ...base, ...env });
    } catch (err) {
      if (err instanceof ConfigError) return err;
      throw err;
    }
    throw new Error(`accepted ${JSON.stringify(env)}`);
  };

  it('is off without an endpoint, and with OTEL_SDK_DISABLED', () => {
    expect(loadConfig(base).tracing).toBeNull();
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }).tracing).toBeNull();
  });

  it('reads the standard variables', () => {
    const tracing = loadConfig({
      ...base,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%20def,tenant=t1',
      OTEL_SERVICE_NAME: 'ws-eu',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    }).tracing!;
    expect(tracing).toMatchObject({
      tracesUrl: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: { 'x-api-key': 'abc def', tenant: 't1' },
      serviceName: 'ws-eu',
      resourceAttributes: { 'deployment.environment': 'prod', 'workspace.process': 'serve' },
      sampleRatio: 0.25,
      parentBased: true,
    });
    // The per-signal endpoint is used as given.
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://c.example/custom' }).tracing!.tracesUrl).toBe('https://c.example/custom');
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, 'worker').tracing!.resourceAttributes['workspace.process']).toBe('worker');
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'novalue' }, 'OTEL_EXPORTER_OTLP_HEADERS'],
  ])('refuses %j naming the variable', (env, variable) => {
    expect(refused(env).variable).toBe(variable);
  });
});
