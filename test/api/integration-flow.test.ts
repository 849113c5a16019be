import { afterAll, describe, expect, it } from 'vitest';
import { createWorkspaceClient, verifyWebhook, type WorkspaceClient } from '../../src/client/index.js';
import { cliJson, startServe, type ServeProcess } from '../helpers/cli.js';
import { waitFor, type ReceivedRequest } from '../helpers/https-receiver.js';
import { serveFixture, stopServe } from '../helpers/serve-fixture.js';
import { testDialects } from '../helpers/test-env.js';

/**
 * docs/integrating.md's first recipe, driven only through the typed client against a real `serve` and a real
 * HTTPS receiver: the receiver is told of each task, completes or approves it through the API, and the run
 * completes with `workflow.completed` delivered.
 */
describe.each(testDialects())('an integration driven through the typed client (%s)', (dialect) => {
  let ws: WorkspaceClient;
  let secret = '';
  const acted: string[] = [];
  const failures: unknown[] = [];

  const f = serveFixture(dialect, {
    routes: (receiver) =>
      receiver.on('/hook', (req: ReceivedRequest, res) => {
        // Answer first, then act: as a receiver should (the work must not hold the delivery past its timeout).
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        let event;
        try {
          event = verifyWebhook(req.body, headers, secret);
        } catch {
          res.writeHead(401).end();
          return;
        }
        res.writeHead(204).end();
        if (event.event !== 'task.assigned') return;
        void (async () => {
          const id = String(event.data.task_id);
          const task = await ws.GET('/v1/tasks/{id}', { params: { path: { id } } });
          if (task.status !== 'open') return;
          if (task.kind === 'approval') await ws.POST('/v1/tasks/{id}/approve', { params: { path: { id } }, body: {} });
          else await ws.POST('/v1/tasks/{id}/complete', { params: { path: { id } }, body: {} });
          acted.push(`${task.kind}:${task.title}`);
        })().catch((err: unknown) => failures.push(err));
      }),
  });
  let serve: ServeProcess | null = null;
  afterAll(() => stopServe(serve));

  it('task.assigned arrives, the receiver completes and approves through the API, the run completes and workflow.completed arrives', async () => {
    const created = await cliJson(['org', 'create', '--name', 'Integrators', '--owner-email', 'bot@example.com'], f.env);
    serve = await startServe(f.env);
    ws = createWorkspaceClient({ baseUrl: serve.address, apiKey: created.api_key.key });
    const ownerId: string = created.owner.id;

    const hook = await ws.POST('/v1/webhooks', { body: { url: f.receiver.url('/hook'), events: ['task.assigned', 'workflow.completed'] } });
    secret = hook.secret;
    const project = await ws.POST('/v1/projects', { body: { name: 'Release' } });
    const workflow = await ws.POST('/v1/projects/{id}/workflows', {
      params: { path: { id: project.id } },
      body: { name: 'Ship', steps: [{ type: 'task', title: 'Write notes', assignee_id: ownerId }, { type: 'approval', title: 'Sign off', assignee_id: ownerId }] },
    });
    const run = await ws.POST('/v1/workflows/{id}/runs', { params: { path: { id: workflow.id } }, body: {}, headers: { 'Idempotency-Key': 'ci-run-1' } });
    expect(run.status).toBe('queued');

    const completed = await waitFor(
      'workflow.completed at the receiver',
      () => f.receiver.at('/hook').find((r) => r.headers['x-service-event'] === 'workflow.completed'),
      30_000,
    );
    expect(failures).toEqual([]);
    expect(acted).toEqual(['todo:Write notes', 'approval:Sign off']);
    const done = await ws.GET('/v1/runs/{id}', { params: { path: { id: run.id } } });
    expect(done.status).toBe('completed');
    expect(done.steps.map((s) => s.status)).toEqual(['completed', 'completed']);
    expect(JSON.parse(completed.body.toString()).data).toMatchObject({ run_id: run.id, status: 'completed' });

    // Each delivered body's `data` is, byte for byte, the `data` GET /v1/events/{id} answers.
    for (const delivery of f.receiver.at('/hook')) {
      const id = String(delivery.headers['x-service-event-id']);
      const raw = await ws.raw.GET('/v1/events/{id}', { params: { path: { id } }, parseAs: 'text' });
      const text = raw.data as unknown as string;
      const body = delivery.body.toString();
      expect(text.slice(text.indexOf(',"data":'))).toBe(body.slice(body.indexOf(',"data":')));
    }
    const listed = [];
    for await (const event of ws.paginate('/v1/events', { params: { query: { type: 'task.assigned,workflow.completed' } } })) listed.push(event.type);
    expect(listed).toEqual(['workflow.completed', 'task.assigned', 'task.assigned']);
  }, 60_000);
});
