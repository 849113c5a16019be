import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/schemas/events.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const ALL_EVENTS = [...EVENT_TYPES];
const ENUM_MESSAGE = `must be one of: ${ALL_EVENTS.join(', ')}`;
const HTTPS_MESSAGE = 'must be an absolute https:// URL';
const USERINFO_MESSAGE = 'must not contain user-info (user:password@)';

/** An https URL of exactly `length` characters. */
function urlOfLength(length: number): string {
  const base = 'https://hooks.example.com/';
  return base + 'a'.repeat(length - base.length);
}

describe.each(testDialects())('webhooks (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg();
  });
  afterAll(async () => env?.close());

  async function listAll(key = org.ownerKey): Promise<Record<string, unknown>[]> {
    const res = await env.request('GET', '/v1/webhooks?limit=100', { key });
    expect(res.status).toBe(200);
    return res.body.data;
  }

  function create(body: unknown, key = org.ownerKey) {
    return env.request('POST', '/v1/webhooks', { key, body });
  }

  describe('creation rules (CONTRACT 6): each broken rule is 400 and creates nothing', () => {
    const valid = { url: 'https://hooks.example.com/in', events: ['project.created'] };
    const cases: [string, unknown, { field: string; message: string }[]][] = [
      ['url and events missing', {}, [{ field: 'url', message: 'is required' }, { field: 'events', message: 'is required' }]],
      ['url of the wrong type', { ...valid, url: 42 }, [{ field: 'url', message: 'must be of type string' }]],
      ['empty url', { ...valid, url: '' }, [{ field: 'url', message: 'must be at least 1 characters' }]],
      ['http:// url', { ...valid, url: 'http://hooks.example.com/in' }, [{ field: 'url', message: HTTPS_MESSAGE }]],
      ['ftp:// url', { ...valid, url: 'ftp://hooks.example.com/in' }, [{ field: 'url', message: HTTPS_MESSAGE }]],
      ['relative url', { ...valid, url: '/hooks/in' }, [{ field: 'url', message: HTTPS_MESSAGE }]],
      ['url without a scheme', { ...valid, url: 'hooks.example.com/in' }, [{ field: 'url', message: HTTPS_MESSAGE }]],
      ['https: without //', { ...valid, url: 'https:hooks.example.com/in' }, [{ field: 'url', message: HTTPS_MESSAGE }]],
      ['url with user and password', { ...valid, url: 'https://user:pass@hooks.example.com/in' }, [{ field: 'url', message: USERINFO_MESSAGE }]],
      ['url with a user', { ...valid, url: 'https://user@hooks.example.com/in' }, [{ field: 'url', message: USERINFO_MESSAGE }]],
      ['url with an empty user-info', { ...valid, url: 'https://@hooks.example.com/in' }, [{ field: 'url', message: USERINFO_MESSAGE }]],
      ['url with surrounding spaces', { ...valid, url: ' https://hooks.example.com/in' }, [{ field: 'url', message: 'must not contain spaces or control characters' }]],
      ['url with a tab inside', { ...valid, url: 'https://hooks.exa\tmple.com/in' }, [{ field: 'url', message: 'must not contain spaces or control characters' }]],
      ['url with a DEL character', { ...valid, url: 'https://hooks.example.com/in\u007f' }, [{ field: 'url', message: 'must not contain spaces or control characters' }]],
      ['url of 2,049 characters', { ...valid, url: urlOfLength(2049) }, [{ field: 'url', message: 'must be at most 2048 characters' }]],
      ['empty events', { ...valid, events: [] }, [{ field: 'events', message: 'must have at least 1 item(s)' }]],
      ['events not an array', { ...valid, events: 'project.created' }, [{ field: 'events', message: 'must be of type array' }]],
      ['unknown event name', { ...valid, events: ['project.created', 'project.archived'] }, [{ field: 'events.1', message: ENUM_MESSAGE }]],
      ['wildcard *', { ...valid, events: ['*'] }, [{ field: 'events.0', message: ENUM_MESSAGE }]],
      ['wildcard project.*', { ...valid, events: ['project.*'] }, [{ field: 'events.0', message: ENUM_MESSAGE }]],
      ['event name in another case', { ...valid, events: ['Project.Created'] }, [{ field: 'events.0', message: ENUM_MESSAGE }]],
      ['secret of 15 characters', { ...valid, secret: 's'.repeat(15) }, [{ field: 'secret', message: 'must be at least 16 characters' }]],
      ['secret of 257 characters', { ...valid, secret: 's'.repeat(257) }, [{ field: 'secret', message: 'must be at most 256 characters' }]],
      ['secret with a control character', { ...valid, secret: 'abcdefghijklmnop\n' }, [{ field: 'secret', message: 'has an invalid format' }]],
      ['secret with a non-ASCII character', { ...valid, secret: 'abcdefghijklmnopé' }, [{ field: 'secret', message: 'has an invalid format' }]],
      ['secret of the wrong type', { ...valid, secret: 1234567890123456 }, [{ field: 'secret', message: 'must be of type string' }]],
      ['unknown field', { ...valid, active: false }, [{ field: 'active', message: 'is not an accepted field' }]],
      [
        'several broken fields at once',
        { url: 'https://hooks.example.com/in', events: [], secret: 'short' },
        [{ field: 'events', message: 'must have at least 1 item(s)' }, { field: 'secret', message: 'must be at least 16 characters' }],
      ],
      [
        'an http:// url together with empty events',
        { url: 'http://hooks.example.com/in', events: [] },
        [{ field: 'url', message: HTTPS_MESSAGE }, { field: 'events', message: 'must have at least 1 item(s)' }],
      ],
    ];

    it.each(cases)('%s', async (_name, body, details) => {
      const before = await listAll();
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details).toEqual(details);
      expect(await listAll()).toEqual(before);
    });
  });

  describe('permissions', () => {
    it('401 without a key, 403 for roles and scopes that may not write webhooks; nothing created', async () => {
      const body = { url: 'https://hooks.example.com/in', events: ['project.created'] };
      const before = await listAll();
      const anonymous = await env.request('POST', '/v1/webhooks', { body });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.error.code).toBe('unauthorized');
      for (const [role, scope] of [['member', 'full'], ['viewer', 'full'], ['owner', 'read'], ['owner', 'projects'], ['owner', 'webhooks:read']] as const) {
        const { key } = await org.member(role, scope);
        const res = await create(body, key);
        expect(res.status, `${role} ${scope}`).toBe(403);
        expect(res.body.error.code).toBe('forbidden');
      }
      expect(await listAll()).toEqual(before);

      const { key: projectsOnly } = await org.member('owner', 'projects');
      const listForbidden = await env.request('GET', '/v1/webhooks', { key: projectsOnly });
      expect(listForbidden.status).toBe(403);
      const { key: viewer } = await org.member('viewer', 'full');
      expect((await env.request('GET', '/v1/webhooks', { key: viewer })).status).toBe(200);
    });

    it('a member cannot delete, an admin can create and delete', async () => {
      const { key: admin } = await org.member('admin', 'webhooks');
      const created = await create({ url: 'https://hooks.example.com/admin', events: ['task.assigned'] }, admin);
      expect(created.status).toBe(201);
      const { key: member } = await org.member('member', 'full');
      const refused = await env.request('DELETE', `/v1/webhooks/${created.body.id}`, { key: member });
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('forbidden');
      expect((await listAll()).map((w) => w.id)).toContain(created.body.id);
      expect((await env.request('DELETE', `/v1/webhooks/${created.body.id}`, { key: admin })).status).toBe(204);
    });
  });

  describe('creation', () => {
    it('returns the object with a generated secret, only once', async () => {
      const res = await create({ url: 'https://hooks.example.com/generated', events: ['project.created', 'project.deleted'] });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(['id', 'url', 'events', 'secret', 'active', 'status', 'created_at', 'failing_since', 'disabled_at', 'disabled_reason', 'previous_secret_expires_at', 'rate_limit', 'ordering']);
      expect(res.body).toMatchObject({
        url: 'https://hooks.example.com/generated',
        events: ['project.created', 'project.deleted'],
        active: true,
        status: 'active',
      });
      expect(res.body.id).toMatch(/^wh_[a-z0-9]{24}$/);
      expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(res.body.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);

      const other = await create({ url: 'https://hooks.example.com/generated', events: ['project.created'] });
      expect(other.body.secret).not.toBe(res.body.secret);

      const listed = (await listAll()).find((w) => w.id === res.body.id);
      const { secret: _secret, ...withoutSecret } = res.body;
      expect(listed).toEqual(withoutSecret);
      expect(JSON.stringify(await listAll())).not.toContain(res.body.secret);
    });

    it('accepts a given secret of 16 and of 256 printable ASCII characters and stores it for signing', async () => {
      for (const secret of ['~ !"#$%&()*+,-./', 'x'.repeat(256)]) {
        const res = await create({ url: 'https://hooks.example.com/given', events: ['project.created'], secret });
        expect(res.status).toBe(201);
        expect(res.body.secret).toBe(secret);
        const row = await env.container.store.repos.webhooks.findById(org.id, res.body.id);
        expect(row?.secret).toBe(secret);
      }
    });

    it('drops duplicate event names, keeping first-seen order; all six names are accepted', async () => {
      const deduped = await create({
        url: 'https://hooks.example.com/dedupe',
        events: ['task.assigned', 'project.created', 'task.assigned', 'workflow.failed', 'project.created'],
      });
      expect(deduped.status).toBe(201);
      expect(deduped.body.events).toEqual(['task.assigned', 'project.created', 'workflow.failed']);
      expect((await listAll()).find((w) => w.id === deduped.body.id)?.events).toEqual(['task.assigned', 'project.created', 'workflow.failed']);

      const all = await create({ url: 'https://hooks.example.com/all', events: ALL_EVENTS });
      expect(all.status).toBe(201);
      expect(all.body.events).toEqual(ALL_EVENTS);
    });

    it('accepts a URL of exactly 2,048 characters, and private addresses when the operator allows them', async () => {
      const long = await create({ url: urlOfLength(2048), events: ['project.created'] });
      expect(long.status).toBe(201);
      expect(long.body.url).toHaveLength(2048);
      // The test environment sets WEBHOOK_ALLOW_PRIVATE_NETWORKS=true.
      const local = await create({ url: 'https://127.0.0.1:8443/hook', events: ['project.created'] });
      expect(local.status).toBe(201);
      expect(local.body.url).toBe('https://127.0.0.1:8443/hook');
    });
  });

  describe('list', () => {
    it('pages newest first with limit and cursor, like projects', async () => {
      const fresh = await env.createOrg('Paging');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await create({ url: `https://hooks.example.com/${i}`, events: ['project.created'] }, fresh.ownerKey);
        ids.push(res.body.id);
      }
      const newestFirst = [...ids].reverse();

      const seen: string[] = [];
      const sizes: number[] = [];
      let cursor: string | null = null;
      do {
        const url: string = `/v1/webhooks?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
        const page = await env.request('GET', url, { key: fresh.ownerKey });
        expect(page.status).toBe(200);
        sizes.push(page.body.data.length);
        seen.push(...page.body.data.map((w: { id: string }) => w.id));
        expect(page.body.data.every((w: Record<string, unknown>) => !('secret' in w))).toBe(true);
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(sizes).toEqual([2, 2, 1]);
      expect(seen).toEqual(newestFirst);

      const exact = await env.request('GET', '/v1/webhooks?limit=5', { key: fresh.ownerKey });
      expect(exact.body.data.map((w: { id: string }) => w.id)).toEqual(newestFirst);
      expect(exact.body.next_cursor).toBeNull();

      const byDefault = await env.request('GET', '/v1/webhooks', { key: fresh.ownerKey });
      expect(byDefault.body.data).toHaveLength(5);
      expect(byDefault.body.next_cursor).toBeNull();

      // Another organisation's subscriptions never show.
      expect((await listAll()).some((w) => ids.includes(w.id as string))).toBe(false);
    });

    it.each([
      ['limit=0', 'limit', 'must be at least 1'],
      ['limit=101', 'limit', 'must be at most 100'],
      ['limit=abc', 'limit', 'must be of type integer'],
      ['cursor=not-a-cursor', 'cursor', 'is not a valid cursor; pass next_cursor from a previous page'],
    ])('rejects %s', async (query, field, message) => {
      const res = await env.request('GET', `/v1/webhooks?${query}`, { key: org.ownerKey });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details).toEqual([{ field, message }]);
    });
  });

  describe('delete', () => {
    it('404 for an unknown id and for another organisation\'s webhook, which stays', async () => {
      const other = await env.createOrg('Other');
      const theirs = await create({ url: 'https://hooks.example.com/theirs', events: ['project.created'] }, other.ownerKey);
      const before = await listAll();
      for (const id of ['wh_doesnotexist000000000000', theirs.body.id, 'not-even-an-id']) {
        const res = await env.request('DELETE', `/v1/webhooks/${id}`, { key: org.ownerKey });
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
      expect(await listAll()).toEqual(before);
      expect((await listAll(other.ownerKey)).map((w) => w.id)).toEqual([theirs.body.id]);
    });

    it('204 removes the subscription; a second delete is 404', async () => {
      const created = await create({ url: 'https://hooks.example.com/gone', events: ['project.created'] });
      const res = await env.request('DELETE', `/v1/webhooks/${created.body.id}`, { key: org.ownerKey });
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await listAll()).map((w) => w.id)).not.toContain(created.body.id);
      const again = await env.request('DELETE', `/v1/webhooks/${created.body.id}`, { key: org.ownerKey });
      expect(again.status).toBe(404);
      expect(again.body.error.code).toBe('not_found');
    });

    it('cancels the subscription\'s pending deliveries at once, and only those', async () => {
      const world = await env.createOrg('Deliveries');
      const doomed = await create({ url: 'https://hooks.example.com/doomed', events: ['project.created'] }, world.ownerKey);
      const kept = await create({ url: 'https://hooks.example.com/kept', events: ['project.created'] }, world.ownerKey);
      for (const name of ['One', 'Two']) {
        expect((await env.request('POST', '/v1/projects', { key: world.ownerKey, body: { name } })).status).toBe(201);
      }
      const repos = env.container.store.repos;
      const deliveries = async () => {
        const events = await repos.events.listEvents(world.id);
        const rows = await Promise.all(events.map((e) => repos.events.listDeliveriesForEvent(world.id, e.id)));
        return rows.flat();
      };
      const initial = await deliveries();
      expect(initial.map((d) => d.status)).toEqual(['pending', 'pending', 'pending', 'pending']);
      // One of the doomed subscription's deliveries already went out: it keeps its outcome.
      const delivered = initial.find((d) => d.webhook_id === doomed.body.id)!;
      await env.container.database.db.updateTable('deliveries').set({ status: 'delivered', next_attempt_at: null }).where('id', '=', delivered.id).execute();

      const res = await env.request('DELETE', `/v1/webhooks/${doomed.body.id}`, { key: world.ownerKey });
      expect(res.status).toBe(204);

      const after = await deliveries();
      const byId = new Map(after.map((d) => [d.id, d]));
      for (const d of initial) {
        const now = byId.get(d.id)!;
        if (d.id === delivered.id) expect(now.status).toBe('delivered');
        else if (d.webhook_id === doomed.body.id) {
          expect(now.status).toBe('cancelled');
          expect(now.next_attempt_at).toBeNull();
        } else {
          expect(now.webhook_id).toBe(kept.body.id);
          expect(now.status).toBe('pending');
        }
      }
      expect(after.filter((d) => d.status === 'cancelled')).toHaveLength(1);

      // Events after the delete no longer reach the deleted subscription.
      await env.request('POST', '/v1/projects', { key: world.ownerKey, body: { name: 'Three' } });
      const latest = (await deliveries()).filter((d) => !byId.has(d.id));
      expect(latest.map((d) => d.webhook_id)).toEqual([kept.body.id]);
    });
  });

  it('shows members and viewers an endpoint without its query values; admins and owners see it whole (issue 46)', async () => {
    const url = 'https://hooks.example.com/in?token=s3cr3t-value&team=a#frag';
    const created = await create({ url, events: ['project.created'] });
    expect(created.status).toBe(201);
    const masked = 'https://hooks.example.com/in?token=•••&team=•••#frag';
    for (const role of ['member', 'viewer', 'admin', 'owner'] as const) {
      const { key } = await org.member(role, 'full');
      const one = await env.request('GET', `/v1/webhooks/${created.body.id}`, { key });
      expect(one.status).toBe(200);
      const shown = role === 'member' || role === 'viewer' ? masked : url;
      expect(one.body.url, role).toBe(shown);
      expect((await listAll(key)).find((w) => w.id === created.body.id)?.url, role).toBe(shown);
      expect(JSON.stringify(one.body).includes('s3cr3t'), role).toBe(shown === url);
    }
  });
});
