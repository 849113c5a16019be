#!/usr/bin/env node
// A/B of what one delivery_attempts row costs to insert, for index changes on that table: migrates a fresh
// SQLite file with each build, then alternates rounds of inserts in transactions of 32 rows (as the worker
// commits a batch of completions), with random ids as newId makes them, spread over N organisations.
//   node bench/attempt-insert-ab.mjs <base-root> <candidate-root> [organisations=50] [rounds=8] [rows=20000]
// A root is a checkout with dist/ built. Reports the median µs per row of each.
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

const [baseRoot, candRoot, orgsText = '50', roundsText = '8', rowsText = '20000'] = process.argv.slice(2);
if (!baseRoot || !candRoot) {
  console.error('usage: node bench/attempt-insert-ab.mjs <base-root> <candidate-root> [organisations] [rounds] [rows]');
  process.exit(2);
}
const { newId } = await import(path.resolve(candRoot, 'dist/lib/ids.js'));
const orgs = Array.from({ length: Number(orgsText) }, () => newId('org'));
const headers = JSON.stringify({ 'content-type': 'application/json', 'x-service-signature': `t=1,v1=${'a'.repeat(64)}` });
const tmp = fs.mkdtempSync(path.join(path.resolve(candRoot, '.bench-tmp'), 'attempts-'));

async function load(root, label) {
  const { openDatabase, migrateToLatest } = await import(path.resolve(root, 'dist/db/database.js'));
  const dataDir = path.join(tmp, label);
  const database = openDatabase({ databaseUrl: null, dataDir });
  await migrateToLatest(database);
  await database.close();
  const db = new BetterSqlite3(path.join(dataDir, 'workspace.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const insert = db.prepare(
    'insert into delivery_attempts (id, org_id, delivery_id, attempt_number, trigger, started_at, duration_ms, request_headers, response_status, response_headers, response_body, error, outcome) values (?,?,?,?,?,?,?,?,?,?,?,?,?)',
  );
  const batch = db.transaction((rows) => {
    for (const row of rows) insert.run(...row);
  });
  let n = 0;
  return {
    db,
    run(count) {
      const start = process.hrtime.bigint();
      for (let b = 0; b < count / 32; b++) {
        const rows = [];
        for (let i = 0; i < 32; i++, n++) {
          rows.push([newId('att'), orgs[n % orgs.length], newId('dlv'), 1, 'automatic', 1_790_000_000_000 + n * 7, 12, headers, 200, '{}', 'ok', null, n % 10 ? 'success' : 'failure']);
        }
        batch(rows);
      }
      return Number(process.hrtime.bigint() - start) / 1000 / count;
    },
  };
}

const base = await load(baseRoot, 'base');
const cand = await load(candRoot, 'candidate');
const rows = Number(rowsText);
base.run(rows);
cand.run(rows);
const a = [];
const b = [];
for (let i = 0; i < Number(roundsText); i++) {
  a.push(base.run(rows));
  b.push(cand.run(rows));
}
const median = (xs) => xs.slice().sort((x, y) => x - y)[xs.length >> 1];
console.log(`attempt insert, ${orgs.length} organisations: base ${median(a).toFixed(1)} µs/row, candidate ${median(b).toFixed(1)} µs/row (${(((median(b) - median(a)) / median(a)) * 100).toFixed(0)}%), ${rows * (Number(roundsText) + 1)} rows in each table at the end`);
base.db.close();
cand.db.close();
fs.rmSync(tmp, { recursive: true, force: true });
