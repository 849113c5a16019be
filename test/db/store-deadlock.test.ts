import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';

/**
 * Two units of work that lock the same two rows in opposite orders (PostgreSQL): the server breaks the cycle by
 * rolling one back (40P01), and the store runs that one again, so both succeed and both writes are there.
 */
describe('a deadlock between two units of work (postgres)', () => {
  let env: TestEnv;

  beforeAll(async () => {
    env = await createTestEnv('postgres');
  });
  afterAll(async () => env?.close());

  it('runs the victim again: both units succeed', async () => {
    const org = await env.createOrg('Deadlock');
    const make = async (name: string) => (await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name } })).body.id as string;
    const [a, b] = [await make('A'), await make('B')];
    const { store } = env.container;
    let held = 0;
    let bothHold!: () => void;
    const barrier = new Promise<void>((resolve) => (bothHold = resolve));
    let runs = 0;
    const unit = (first: string, second: string, label: string) =>
      store.transaction(async (repos) => {
        runs++;
        await repos.projects.update(org.id, first, { description: `${label} first`, updated_at: Date.now() });
        if (++held === 2) bothHold();
        await barrier;
        await repos.projects.update(org.id, second, { description: `${label} second`, updated_at: Date.now() });
        return label;
      });
    await expect(Promise.all([unit(a, b, 'one'), unit(b, a, 'two')])).resolves.toEqual(['one', 'two']);
    expect(runs).toBe(3);
    const rows = await env.container.database.db.selectFrom('projects').select(['id', 'description']).where('id', 'in', [a, b]).execute();
    // The unit run again committed last: both rows hold its two writes.
    const [label] = rows.map((r) => r.description!.split(' ')[0]);
    expect(rows.map((r) => r.description).sort()).toEqual([`${label} first`, `${label} second`]);
  });
});
