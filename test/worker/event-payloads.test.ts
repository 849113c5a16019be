import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_SCHEMAS, EVENT_TYPES, type EventType } from '../../src/schemas/events.js';
import { deliverEveryEvent } from '../helpers/event-flows.js';
import { startDeliveryHarness, type DeliveryHarness } from '../helpers/https-receiver.js';
import { testDialects } from '../helpers/test-env.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const SECRET = 'event-payloads-secret-0123456789';

interface Body {
  event: EventType;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * The documented event bodies (src/schemas/events.ts, published in the OpenAPI document's `webhooks`
 * section and typed in the client) against the bytes the worker really sends, for every shape each event
 * takes. The schemas are closed, so a field added, dropped, renamed or retyped in a builder fails here.
 */
describe.each(testDialects())('event bodies match their documented schemas (%s)', (dialect) => {
  let harness: DeliveryHarness;
  let bodies: Body[];
  /** Validators of the TypeBox schemas, and of the same schemas as the served document publishes them. */
  const source = new Map<EventType, ValidateFunction>();
  const published = new Map<EventType, ValidateFunction>();

  beforeAll(async () => {
    harness = await startDeliveryHarness(dialect, {});
    const { deliveries } = await deliverEveryEvent(harness, SECRET);
    bodies = deliveries.map((d) => JSON.parse(d.body.toString('utf8')) as Body);

    const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));
    for (const event of EVENT_TYPES) source.set(event, ajv.compile(JSON.parse(JSON.stringify(EVENT_SCHEMAS[event]))));
    const served = await harness.env.request('GET', '/openapi.json');
    expect(served.status).toBe(200);
    ajv.addSchema(served.body, 'openapi.json');
    for (const event of EVENT_TYPES) {
      published.set(event, ajv.getSchema(`openapi.json#/webhooks/${event}/post/requestBody/content/application~1json/schema`)!);
    }
  });
  afterAll(async () => harness?.close());

  it('every delivered body validates against the schema of its event, in the source and in the served document', () => {
    expect(new Set(bodies.map((b) => b.event))).toEqual(new Set(EVENT_TYPES));
    for (const body of bodies) {
      for (const validators of [source, published]) {
        const validate = validators.get(body.event)!;
        expect(validate(body), `${body.event} ${JSON.stringify(body)}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
  });

  it('the flows covered each shape the schemas describe', () => {
    const of = (event: EventType) => bodies.filter((b) => b.event === event).map((b) => b.data);
    expect(of('project.created').map((d) => [d.status, d.description])).toEqual([['active', 'The first one'], ['draft', null]]);
    expect(of('project.updated').map((d) => d.previous)).toEqual([{ name: 'Launch' }, { description: 'The first one' }, { status: 'active', description: null }]);
    expect(of('project.deleted')).toEqual([{ project_id: expect.stringMatching(/^proj_/), name: 'Launch 2', status: 'archived' }]);
    expect(of('workflow.completed')).toHaveLength(1);
    expect(of('workflow.failed').map((d) => d.error_code)).toEqual(['approval_rejected', 'task_cancelled', 'cancelled']);
    const assigned = of('task.assigned');
    expect(assigned.map((d) => [d.previous_assignee_id === null, d.assigned_by === null, d.run_id === null, d.due_at === null])).toEqual([
      [true, false, true, false], // a task created with an assignee by a person
      [false, false, true, false], // reassigned
      [true, true, false, false], // a run's Task step with "Due in"
      [true, true, false, true], // a run's Approval step
      [true, true, false, false],
      [true, true, false, false],
    ]);
  });

  it('refuses a body with a field the documentation does not list, or without one it lists', () => {
    for (const body of bodies) {
      const validate = source.get(body.event)!;
      expect(validate({ ...body, data: { ...body.data, extra: 1 } })).toBe(false);
      expect(validate({ ...body, extra: 1 })).toBe(false);
      const [first] = Object.keys(body.data);
      const { [first!]: _dropped, ...fewer } = body.data;
      expect(validate({ ...body, data: fewer })).toBe(false);
      expect(validate({ ...body, event: body.event === 'project.created' ? 'project.updated' : 'project.created' })).toBe(false);
    }
  });

  it("each schema's documented example validates against it", () => {
    for (const event of EVENT_TYPES) {
      const [example] = EVENT_SCHEMAS[event].examples as unknown[];
      expect(source.get(event)!(example), event).toBe(true);
    }
  });
});
