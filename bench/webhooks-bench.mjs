#!/usr/bin/env node
// `npm run bench:webhooks`: the delivery engine against the limit of this machine (build first: `npm run build`).
//
// 1. Limit: a plain undici loop POSTs the 20,000 bodies (10,000 events × 2 subscriptions) to a local HTTPS
//    receiver (its own process) at the worker's concurrency.
// 2. Drain: the same 10,000 events fanned out to 2 subscriptions are seeded as a backlog, then the worker
//    (dist/, in this process) delivers them: deliveries per second, compared with the plain loop.
// 3. Live: --live-events more events are created through the projects service (transaction + outbox + wake, as
//    the API does) at a steady rate while the worker runs: throughput and latency from event to delivery (receiver clock
//    minus the event's timestamp).
// 4. Memory: 100,000 pending deliveries are seeded through the repositories, `./bin/workspace worker` runs
//    against them for --drain-seconds, and its peak RSS (VmHWM) is read from /proc.
//
// Options: --events N (10000), --concurrency N (64), --rate EVENTS_PER_S (150) and --live-events N (3000) for
//          phase 3, --drain-seconds S (15),
//          --pending N (100000), --skip-memory
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');

// ---------------------------------------------------------------- receiver (child process mode)
if (process.argv[2] === '--receiver') {
  const [key, cert] = [fs.readFileSync(process.argv[3]), fs.readFileSync(process.argv[4])];
  let latencies = [];
  let count = 0;
  let first = 0;
  let last = 0;
  const server = https.createServer({ key, cert, keepAlive: true, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      count++;
      if (!first) first = now;
      last = now;
      const ts = req.headers['x-bench-sent'] ? Number(req.headers['x-bench-sent']) : Date.parse(JSON.parse(Buffer.concat(chunks).toString()).timestamp);
      latencies.push(now - ts);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  let handshakes = 0;
  server.on('secureConnection', () => handshakes++);
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (msg) => {
    if (msg === 'reset') {
      latencies = [];
      count = 0;
      first = last = 0;
      handshakes = 0;
      process.send({ reset: true });
    } else if (msg === 'stats') {
      process.send({ count, first, last, latencies, handshakes });
    } else if (msg === 'exit') {
      process.exit(0);
    }
  });
}

function parseArgs(argv) {
  const out = { events: 10_000, concurrency: 64, drainSeconds: 15, pending: 100_000, skipMemory: false, rate: 150, liveEvents: 3000 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--skip-memory') out.skipMemory = true;
    else if (arg === '--events') out.events = Number(argv[++i]);
    else if (arg === '--concurrency') out.concurrency = Number(argv[++i]);
    else if (arg === '--drain-seconds') out.drainSeconds = Number(argv[++i]);
    else if (arg === '--pending') out.pending = Number(argv[++i]);
    else if (arg === '--rate') out.rate = Number(argv[++i]);
    else if (arg === '--live-events') out.liveEvents = Number(argv[++i]);
    else throw new Error(`unknown option ${arg}`);
  }
  return out;
}

const pct = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

function summary(stats) {
  const sorted = [...stats.latencies].sort((a, b) => a - b);
  return { count: stats.count, p50: pct(sorted, 50), p99: pct(sorted, 99) };
}

function ask(child, msg) {
  return new Promise((resolve) => {
    child.once('message', resolve);
    child.send(msg);
  });
}

async function waitForCount(receiver, n, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await ask(receiver, 'stats');
    if (s.count >= n || Date.now() > deadline) return s;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(path.join(root, 'dist/delivery/index.js'))) throw new Error('build first: npm run build');
  const { loadConfig } = await import(path.join(root, 'dist/config.js'));
  const { createContainer } = await import(path.join(root, 'dist/container.js'));
  const { cliActor } = await import(path.join(root, 'dist/services/actor.js'));
  const { startDeliveryWorker } = await import(path.join(root, 'dist/delivery/index.js'));
  const { recordEvent } = await import(path.join(root, 'dist/services/events.js'));

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-whbench-'));
  const keyFile = path.join(tmp, 'key.pem');
  const certFile = path.join(tmp, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'pipe' });
  const ca = fs.readFileSync(certFile, 'utf8');

  const receiver = spawn(process.execPath, [fileURLToPath(import.meta.url), '--receiver', keyFile, certFile], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise((resolve) => receiver.once('message', resolve));
  const url = `https://127.0.0.1:${port}/hook`;
  const results = { machine: `${os.cpus().length} × ${os.cpus()[0]?.model}`, node: process.version, events: opts.events, concurrency: opts.concurrency };

  try {
    // ------------------------------------------------------------ seed helpers
    const env = {
      DATA_DIR: path.join(tmp, 'data'),
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_CONCURRENCY: String(opts.concurrency),
      WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: String(opts.concurrency),
    };
    const config = loadConfig(env);
    const container = await createContainer(config, { migrate: true });
    const org = await container.services.admin.createOrganization({ name: 'Bench', ownerEmail: 'bench@example.com', ownerName: 'Bench' });
    const orgId = org.organization.id;
    for (let i = 0; i < 2; i++) {
      await container.services.webhooks.create(cliActor(orgId), { url: `${url}?sub=${i}`, events: ['project.created'], secret: `bench-secret-${i}-0123456789` });
    }
    const seedEvents = async (n) => {
      for (let done = 0; done < n; done += 500) {
        await container.store.transaction(async (repos) => {
          for (let i = done; i < Math.min(n, done + 500); i++) {
            await recordEvent(repos, { orgId, type: 'project.created', data: { project_id: `proj_bench${i}`, name: `P${i}`, status: 'active' }, occurredAt: Date.now() });
          }
        });
      }
    };

    // ------------------------------------------------------------ 1. the limit: plain undici loop
    // Run before and after the worker's drain: the machine's load drifts, so the drain is compared with
    // the mean of the two runs that bracket it.
    const sample = JSON.stringify({ event: 'project.created', timestamp: new Date().toISOString(), data: { project_id: 'proj_bench0000000000000000', name: 'P0', status: 'active' } });
    const total = opts.events * 2;
    const plainLoop = async () => {
      const agent = new Agent({ connect: { ca }, keepAliveTimeout: 30_000 });
      let next = 0;
      const started = performance.now();
      const perRequest = [];
      await Promise.all(
        Array.from({ length: opts.concurrency }, async () => {
          while (next < total) {
            next++;
            const t0 = performance.now();
            const res = await request(url, { method: 'POST', body: sample, headers: { 'content-type': 'application/json', 'x-bench-sent': String(Date.now()) }, dispatcher: agent });
            await res.body.dump();
            perRequest.push(performance.now() - t0);
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      await agent.close();
      perRequest.sort((a, b) => a - b);
      return { deliveries: total, perSecond: Math.round(total / seconds), p50ms: +pct(perRequest, 50).toFixed(1), p99ms: +pct(perRequest, 99).toFixed(1) };
    };
    results.plain = await plainLoop();
    console.log(`plain undici loop: ${results.plain.perSecond}/s, request p50 ${results.plain.p50ms} ms, p99 ${results.plain.p99ms} ms`);

    // ------------------------------------------------------------ 2. drain a backlog
    await ask(receiver, 'reset');
    await seedEvents(opts.events);
    const drainStart = Date.now();
    const worker = await startDeliveryWorker(container, { ca });
    const drained = await waitForCount(receiver, total, 300_000);
    const drainSeconds = (drained.last - drainStart) / 1000;
    await ask(receiver, 'reset');
    results.plainAfter = await plainLoop();
    const plainMean = (results.plain.perSecond + results.plainAfter.perSecond) / 2;
    results.drain = { handshakes: drained.handshakes, deliveries: drained.count, perSecond: Math.round(drained.count / drainSeconds), ratioToPlain: +(drained.count / drainSeconds / plainMean).toFixed(2) };
    console.log(`plain undici loop again: ${results.plainAfter.perSecond}/s`);
    console.log(`worker, backlog of ${total}: ${results.drain.perSecond}/s (${Math.round(results.drain.ratioToPlain * 100)}% of the plain loops' mean)`);

    // ------------------------------------------------------------ 3. live: events through the service
    await ask(receiver, 'reset');
    // Events arrive at a steady --rate per second (below capacity), so latency shows the engine's reaction
    // time rather than the length of a queue the producer built up.
    const liveStart = Date.now();
    for (let i = 0; i < opts.liveEvents; i++) {
      const due = liveStart + (i * 1000) / opts.rate;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      await container.services.projects.create(cliActor(orgId), { name: `Live ${i}` });
    }
    const produced = Date.now();
    const live = await waitForCount(receiver, opts.liveEvents * 2, 300_000);
    const s = summary(live);
    results.live = {
      events: opts.liveEvents,
      deliveries: live.count,
      eventsPerSecondCreated: Math.round(opts.liveEvents / ((produced - liveStart) / 1000)),
      perSecond: Math.round(live.count / ((live.last - liveStart) / 1000)),
      p50ms: s.p50,
      p99ms: s.p99,
    };
    console.log(`worker, live (events created through the service while delivering): ${results.live.perSecond} deliveries/s, event→delivery p50 ${s.p50} ms, p99 ${s.p99} ms`);
    await worker.stop();
    await container.close();

    // ------------------------------------------------------------ 4. memory with 100,000 pending
    if (!opts.skipMemory) {
      const memEnv = { ...env, DATA_DIR: path.join(tmp, 'mem') };
      const memContainer = await createContainer(loadConfig(memEnv), { migrate: true });
      const memOrg = await memContainer.services.admin.createOrganization({ name: 'Mem', ownerEmail: 'mem@example.com', ownerName: 'Mem' });
      for (let i = 0; i < 2; i++) {
        await memContainer.services.webhooks.create(cliActor(memOrg.organization.id), { url: `${url}?sub=${i}`, events: ['project.created'] });
      }
      const seedStart = Date.now();
      for (let done = 0; done < opts.pending / 2; done += 1000) {
        await memContainer.store.transaction(async (repos) => {
          for (let i = done; i < Math.min(opts.pending / 2, done + 1000); i++) {
            await recordEvent(repos, { orgId: memOrg.organization.id, type: 'project.created', data: { project_id: `proj_m${i}`, name: `M${i}`, status: 'active' }, occurredAt: Date.now() });
          }
        });
      }
      await memContainer.close();
      console.log(`seeded ${opts.pending} pending deliveries in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`);
      await ask(receiver, 'reset');
      const child = spawn(process.execPath, [path.join(root, 'bin/workspace'), 'worker'], {
        env: { ...process.env, ...memEnv, NODE_EXTRA_CA_CERTS: certFile },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      let peakKb = 0;
      const sampler = setInterval(() => {
        try {
          const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
          peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
        } catch {
          // The process has exited between samples.
        }
      }, 200);
      await new Promise((r) => setTimeout(r, opts.drainSeconds * 1000));
      const mem = await ask(receiver, 'stats');
      clearInterval(sampler);
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      results.memory = { pending: opts.pending, drainSeconds: opts.drainSeconds, delivered: mem.count, peakRssMb: Math.round(peakKb / 1024) };
      console.log(`worker process with ${opts.pending} pending: delivered ${mem.count} in ${opts.drainSeconds} s, peak RSS ${results.memory.peakRssMb} MB`);
    }
  } finally {
    receiver.send('exit');
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  fs.mkdirSync(path.join(here, 'results'), { recursive: true });
  const out = path.join(here, 'results', `webhooks-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(out, JSON.stringify(results, null, 2));
  console.log(JSON.stringify(results, null, 2));
  console.log(`written ${path.relative(root, out)}`);
}

if (process.argv[2] !== '--receiver') {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
