#!/usr/bin/env node
// `npm run bench:webhooks`: the delivery engine against the limit of this machine (build first: `npm run build`).
//
// 1. Limit: a plain undici loop POSTs the same 20,000 requests the worker sends (10,000 events × 2
//    subscriptions: the stored bodies, the contract's headers and signatures, computed ahead) to a local HTTPS
//    receiver (its own process) at the worker's concurrency.
// 2. Drain: the 10,000 events fanned out to 2 subscriptions are seeded as a backlog in a fresh database, then
//    the worker (dist/, in this process) delivers them: deliveries per second, compared with the plain loops
//    run just before and just after it. Repeated --runs times (plain, drain, plain, drain, ..., plain); the
//    figure is the median ratio, with the load average around each run.
// 3. Live: --live-events more events are created through the projects service (transaction + outbox + wake, as
//    the API does) at a steady rate while the worker runs: throughput and latency from event to delivery (receiver clock
//    minus the event's timestamp).
// 5. Control (CONTRACT 14): a FIFO subscription against a receiver answering in 5 ms (deliveries per second,
//    most in flight at once), and a rate_limit 50 subscription's rate over --rate-seconds (printed before 4).
// 4. Memory: 100,000 pending deliveries are seeded through the repositories, `./bin/workspace worker` runs
//    against them for --drain-seconds, and its peak RSS (VmHWM) is read from /proc.
//
// Options: --events N (10000), --concurrency N (64), --runs N (3) drains, --rate EVENTS_PER_S (150) and
//          --live-events N (3000) for phase 3, --drain-seconds S (15), --pending N (100000), --skip-live,
//          --skip-control, --fifo-events N (2000) and --rate-seconds S (30) for phase 5,
//          --skip-memory, --cpu-prof DIR (a V8 CPU profile of each drain, written to DIR),
//          --root DIR (the built tree to measure, default this one: compare another build with the same harness),
//          --vs DIR (A/B: drains alternate between this build and the build in DIR, e.g. a worktree of the previous
//          release with `npm run build` done; each drain is compared with the plain loops around it, and the figure
//          is this build's median ratio over DIR's, same run, same machine)
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { builtModule, builtPath } from './built.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
let root = path.resolve(here, '..');

// ---------------------------------------------------------------- receiver (child process mode)
if (process.argv[2] === '--receiver') {
  const [key, cert] = [fs.readFileSync(process.argv[3]), fs.readFileSync(process.argv[4])];
  let latencies = [];
  let count = 0;
  let first = 0;
  let last = 0;
  // Phase 5 reads when each request arrived and how many were open at once.
  let arrivals = [];
  let open = 0;
  let maxOpen = 0;
  const server = https.createServer({ key, cert, keepAlive: true, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks = [];
    open++;
    maxOpen = Math.max(maxOpen, open);
    // Closed when the answer is given (or the connection ends first), once: counted as the answer is
    // written, since no client can send its next request before that ('finish' may come after it).
    let closed = false;
    const close = () => {
      if (!closed) open--;
      closed = true;
    };
    res.on('close', close);
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      count++;
      if (!first) first = now;
      last = now;
      arrivals.push(performance.now());
      // Same work for the plain loop's requests and the worker's: both carry the stored event bodies.
      const ts = Date.parse(JSON.parse(Buffer.concat(chunks).toString()).timestamp);
      latencies.push(now - ts);
      const delay = Number(/[?&]delay=(\d+)/.exec(req.url)?.[1] ?? 0);
      const answer = () => {
        close();
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      };
      if (delay > 0) setTimeout(answer, delay);
      else answer();
    });
  });
  let handshakes = 0;
  server.on('secureConnection', () => handshakes++);
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (msg) => {
    if (msg === 'reset') {
      latencies = [];
      arrivals = [];
      maxOpen = open;
      count = 0;
      first = last = 0;
      handshakes = 0;
      process.send({ reset: true });
    } else if (msg === 'count') {
      // Polled while the worker runs: a few numbers, not the latencies (20,000 of them to serialise each time).
      process.send({ count, first, last, handshakes });
    } else if (msg === 'arrivals') {
      process.send({ count, arrivals, maxOpen });
    } else if (msg === 'stats') {
      process.send({ count, first, last, latencies, handshakes });
    } else if (msg === 'exit') {
      process.exit(0);
    }
  });
}

function parseArgs(argv) {
  const out = { events: 10_000, concurrency: 64, runs: 3, drainSeconds: 15, pending: 100_000, skipMemory: false, skipLive: false, skipControl: false, fifoEvents: 2000, rateSeconds: 30, rate: 150, liveEvents: 3000, cpuProf: null, root: null, vs: null };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--skip-memory') out.skipMemory = true;
    else if (arg === '--skip-live') out.skipLive = true;
    else if (arg === '--skip-control') out.skipControl = true;
    else if (arg === '--fifo-events') out.fifoEvents = Number(argv[++i]);
    else if (arg === '--rate-seconds') out.rateSeconds = Number(argv[++i]);
    else if (arg === '--runs') out.runs = Number(argv[++i]);
    else if (arg === '--cpu-prof') out.cpuProf = path.resolve(argv[++i]);
    else if (arg === '--root') out.root = path.resolve(argv[++i]);
    else if (arg === '--vs') out.vs = path.resolve(argv[++i]);
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

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const load = () => +os.loadavg()[0].toFixed(2);
/**
 * CPU time of this process's main thread in µs (Linux: /proc schedstat, exact to the ns), or of the whole
 * process where that is not available. The worker's event loop is this thread: its CPU per delivery depends
 * little on the machine's load, unlike throughput.
 */
const mainThreadCpuUs = () => {
  try {
    return Number(fs.readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
  } catch {
    const u = process.cpuUsage();
    return u.user + u.system;
  }
};

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

async function waitForCount(receiver, n, timeoutMs, withLatencies = false) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await ask(receiver, 'count');
    if (s.count >= n || Date.now() > deadline) return withLatencies ? ask(receiver, 'stats') : s;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.root) root = opts.root;
  builtPath(path.join(root, 'dist'), 'worker');
  const { loadConfig } = await import(path.join(root, 'dist/config.js'));
  const { createContainer } = await import(path.join(root, 'dist/container.js'));
  const { cliActor } = await builtModule(path.join(root, 'dist'), 'actor');
  const { startDeliveryWorker } = await builtModule(path.join(root, 'dist'), 'worker');
  const { recordEvent } = await builtModule(path.join(root, 'dist'), 'events');
  const { USER_AGENT } = await import(path.join(root, 'dist/delivery/sender.js'));
  /** A build's own modules (its worker, its schema), for --vs: the other build is loaded beside this one. */
  const buildOf = async (dir) => ({
    dir,
    loadConfig: (await import(path.join(dir, 'dist/config.js'))).loadConfig,
    createContainer: (await import(path.join(dir, 'dist/container.js'))).createContainer,
    cliActor: (await builtModule(path.join(dir, 'dist'), 'actor')).cliActor,
    startDeliveryWorker: (await builtModule(path.join(dir, 'dist'), 'worker')).startDeliveryWorker,
    recordEvent: (await builtModule(path.join(dir, 'dist'), 'events')).recordEvent,
  });
  const builds = [await buildOf(root), ...(opts.vs ? [await buildOf(opts.vs)] : [])];

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-whbench-'));
  const keyFile = path.join(tmp, 'key.pem');
  const certFile = path.join(tmp, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'pipe' });
  const ca = fs.readFileSync(certFile, 'utf8');

  const receiver = spawn(process.execPath, [fileURLToPath(import.meta.url), '--receiver', keyFile, certFile], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise((resolve) => receiver.once('message', resolve));
  const url = `https://127.0.0.1:${port}/hook`;
  const results = { root, machine: `${os.cpus().length} × ${os.cpus()[0]?.model}`, node: process.version, events: opts.events, concurrency: opts.concurrency };

  try {
    // ------------------------------------------------------------ seed helpers
    const baseEnv = {
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_CONCURRENCY: String(opts.concurrency),
      WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: String(opts.concurrency),
    };
    // Each drain gets a fresh database (as the original single drain did): earlier runs' history does not
    // weigh on later ones.
    let fresh = 0;
    const openSeeded = async (events = opts.events, build = builds[0]) => {
      const env = { ...baseEnv, DATA_DIR: path.join(tmp, `data-${fresh++}`) };
      const container = await build.createContainer(build.loadConfig(env), { migrate: true });
      const org = await container.services.admin.createOrganization({ name: 'Bench', ownerEmail: 'bench@example.com', ownerName: 'Bench' });
      const orgId = org.organization.id;
      for (let i = 0; i < 2; i++) {
        await container.services.webhooks.create(build.cliActor(orgId), { url: `${url}?sub=${i}`, events: ['project.created'], secret: `bench-secret-${i}-0123456789` });
      }
      for (let done = 0; done < events; done += 500) {
        await container.store.transaction(async (repos) => {
          for (let i = done; i < Math.min(events, done + 500); i++) {
            await build.recordEvent(repos, { orgId, type: 'project.created', data: { project_id: `proj_bench${i}`, name: `P${i}`, status: 'active' }, occurredAt: Date.now() });
          }
        });
      }
      return { container, orgId, env };
    };

    // ------------------------------------------------------------ 1. the limit: plain undici loop
    // The same requests the worker sends for the first backlog: URL, stored body, the contract's headers with
    // their signatures (computed here, ahead: the loop measures what the wire and the receiver allow).
    const total = opts.events * 2;
    const first = await openSeeded();
    const requests = (
      await first.container.database.db
        .selectFrom('deliveries as d')
        .innerJoin('events as e', 'e.id', 'd.event_id')
        .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
        .select(['d.id', 'd.event_id', 'd.event_type', 'e.body', 'w.url', 'w.secret'])
        .orderBy('d.seq')
        .execute()
    ).map((r) => {
      const body = Buffer.from(r.body, 'utf8');
      return {
        url: r.url,
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-service-event': r.event_type,
          'x-service-event-id': r.event_id,
          'x-service-delivery-id': r.id,
          'x-service-delivery-attempt': '1',
          'x-service-signature': createHmac('sha256', r.secret).update(body).digest('hex'),
          // The Standard Webhooks trio every attempt carries since issue 22 (the secret here is not whsec_: its UTF-8 bytes key it).
          'webhook-id': r.event_id,
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'webhook-signature': `v1,${createHmac('sha256', r.secret).update(`${r.event_id}.${Math.floor(Date.now() / 1000)}.`).update(body).digest('base64')}`,
        },
      };
    });
    if (requests.length !== total) throw new Error(`seeded ${requests.length} deliveries, expected ${total}`);
    const plainLoop = async () => {
      await ask(receiver, 'reset');
      const agent = new Agent({ connect: { ca }, keepAliveTimeout: 30_000 });
      let next = 0;
      const cpuBefore = process.cpuUsage();
      const threadBefore = mainThreadCpuUs();
      const started = performance.now();
      const perRequest = [];
      await Promise.all(
        Array.from({ length: opts.concurrency }, async () => {
          while (next < total) {
            const r = requests[next++];
            const t0 = performance.now();
            const res = await request(r.url, { method: 'POST', body: r.body, headers: r.headers, dispatcher: agent });
            await res.body.dump();
            perRequest.push(performance.now() - t0);
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      const thread = mainThreadCpuUs() - threadBefore;
      await agent.close();
      perRequest.sort((a, b) => a - b);
      return { perSecond: Math.round(total / seconds), cpuUsPerRequest: Math.round((cpu.user + cpu.system) / total), threadCpuUsPerRequest: Math.round(thread / total), p50ms: +pct(perRequest, 50).toFixed(1), p99ms: +pct(perRequest, 99).toFixed(1) };
    };

    // ------------------------------------------------------------ 2. drain a backlog, --runs times
    // Plain, drain, plain, drain, ..., plain: the machine's load drifts, so each drain is compared with the
    // mean of the two plain loops that bracket it, and the figure is the median over the runs.
    let profiler = null;
    if (opts.cpuProf) {
      const { Session } = await import('node:inspector/promises');
      profiler = new Session();
      profiler.connect();
      await profiler.post('Profiler.enable');
      fs.mkdirSync(opts.cpuProf, { recursive: true });
    }
    results.runs = [];
    let plainBefore = await plainLoop();
    console.log(`plain undici loop: ${plainBefore.perSecond}/s, ${plainBefore.cpuUsPerRequest} µs CPU each, request p50 ${plainBefore.p50ms} ms, p99 ${plainBefore.p99ms} ms (load ${load()})`);
    let seeded = first;
    // With --vs, every run drains once per build, in alternating order, each between its own plain loops.
    const drains = Array.from({ length: opts.runs }, (_, run) => (builds.length === 1 ? [builds[0]] : run % 2 === 0 ? builds : [...builds].reverse())).flat();
    for (let run = 0; run < drains.length; run++) {
      const build = drains[run];
      if (!seeded || build !== builds[0]) {
        await seeded?.container.close();
        seeded = await openSeeded(opts.events, build);
      }
      const loadBefore = load();
      await ask(receiver, 'reset');
      if (profiler) await profiler.post('Profiler.start');
      const cpuBefore = process.cpuUsage();
      const threadBefore = mainThreadCpuUs();
      const drainStart = Date.now();
      const worker = await build.startDeliveryWorker(seeded.container, { ca });
      const drained = await waitForCount(receiver, total, 300_000);
      const cpu = process.cpuUsage(cpuBefore);
      const thread = mainThreadCpuUs() - threadBefore;
      if (profiler) {
        const { profile } = await profiler.post('Profiler.stop');
        fs.writeFileSync(path.join(opts.cpuProf, `drain-${run + 1}.cpuprofile`), JSON.stringify(profile));
      }
      const drainSeconds = (drained.last - drainStart) / 1000;
      await worker.stop();
      await seeded.container.close();
      seeded = null;
      const plainAfter = await plainLoop();
      const perSecond = drained.count / drainSeconds;
      const plainMean = (plainBefore.perSecond + plainAfter.perSecond) / 2;
      const entry = {
        build: build.dir,
        plainBefore: plainBefore.perSecond,
        drain: Math.round(perSecond),
        plainAfter: plainAfter.perSecond,
        plainCpuUsPerRequest: Math.round((plainBefore.cpuUsPerRequest + plainAfter.cpuUsPerRequest) / 2),
        plainThreadCpuUsPerRequest: Math.round((plainBefore.threadCpuUsPerRequest + plainAfter.threadCpuUsPerRequest) / 2),
        ratio: +(perSecond / plainMean).toFixed(3),
        // The worker process's CPU per delivery (user + system, this process only; the receiver is apart).
        workerCpuUsPerDelivery: Math.round((cpu.user + cpu.system) / drained.count),
        // The event loop's own CPU (the thread that sends, and on SQLite runs the queue's statements).
        workerThreadCpuUsPerDelivery: Math.round(thread / drained.count),
        handshakes: drained.handshakes,
        deliveries: drained.count,
        load: [loadBefore, load()],
      };
      results.runs.push(entry);
      console.log(
        `run ${run + 1}: worker drained ${drained.count} at ${entry.drain}/s, ${entry.workerCpuUsPerDelivery} µs CPU each (main thread ${entry.workerThreadCpuUsPerDelivery}); plain ${entry.plainBefore}/s before, ${entry.plainAfter}/s after (${entry.plainCpuUsPerRequest} µs CPU each, main thread ${entry.plainThreadCpuUsPerRequest}): ratio ${(entry.ratio * 100).toFixed(1)} % (load ${entry.load[0]} → ${entry.load[1]})`,
      );
      plainBefore = plainAfter;
    }
    profiler?.disconnect();
    const mine = results.runs.filter((r) => r.build === root);
    results.drain = {
      runs: opts.runs,
      medianPerSecond: Math.round(median(mine.map((r) => r.drain))),
      medianRatio: +median(mine.map((r) => r.ratio)).toFixed(3),
      medianWorkerCpuUsPerDelivery: median(mine.map((r) => r.workerCpuUsPerDelivery)),
      medianWorkerThreadCpuUsPerDelivery: median(mine.map((r) => r.workerThreadCpuUsPerDelivery)),
      medianPlainThreadCpuUsPerRequest: median(mine.map((r) => r.plainThreadCpuUsPerRequest)),
    };
    if (opts.vs) {
      const theirs = results.runs.filter((r) => r.build === opts.vs);
      const vs = { build: opts.vs, medianRatio: +median(theirs.map((r) => r.ratio)).toFixed(3), medianPerSecond: Math.round(median(theirs.map((r) => r.drain))) };
      results.vs = { ...vs, thisOverThat: +(results.drain.medianRatio / vs.medianRatio).toFixed(3) };
      console.log(`A/B: this build ${(results.drain.medianRatio * 100).toFixed(1)} % of the plain loops, ${opts.vs} ${(vs.medianRatio * 100).toFixed(1)} %: ratio ${results.vs.thisOverThat}`);
    }
    console.log(
      `worker, backlog of ${total}, median of ${opts.runs}: ${results.drain.medianPerSecond}/s, ratio ${(results.drain.medianRatio * 100).toFixed(1)} % of the plain loops, ${results.drain.medianWorkerCpuUsPerDelivery} µs CPU per delivery (main thread ${results.drain.medianWorkerThreadCpuUsPerDelivery}; plain loop's ${results.drain.medianPlainThreadCpuUsPerRequest})`,
    );

    // ------------------------------------------------------------ 3. live: events through the service
    if (!opts.skipLive) {
      const { container, orgId } = await openSeeded(0);
      const worker = await startDeliveryWorker(container, { ca });
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
      const live = await waitForCount(receiver, opts.liveEvents * 2, 300_000, true);
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
    }

    // ------------------------------------------------------------ 5. delivery control (CONTRACT 14)
    // FIFO: one ordered subscription whose receiver answers in 5 ms, a backlog of --fifo-events: the rate one
    // attempt at a time sustains (target at least 100/s) and the most requests the receiver had open (1).
    // Rate limit: one subscription with rate_limit 50 and more backlog than --rate-seconds can take: the rate
    // measured over those seconds (target 50 ± 2) and the busiest one-second window of arrivals.
    if (!opts.skipControl) {
      const controlled = async (options, events) => {
        const env = { ...baseEnv, DATA_DIR: path.join(tmp, `control-${fresh++}`) };
        const container = await createContainer(loadConfig(env), { migrate: true });
        const org = await container.services.admin.createOrganization({ name: 'Control', ownerEmail: 'control@example.com', ownerName: 'Control' });
        const orgId = org.organization.id;
        await container.services.webhooks.create(cliActor(orgId), { events: ['project.created'], ...options });
        for (let done = 0; done < events; done += 500) {
          await container.store.transaction(async (repos) => {
            for (let i = done; i < Math.min(events, done + 500); i++) {
              await recordEvent(repos, { orgId, type: 'project.created', data: { project_id: `proj_c${i}`, name: `C${i}`, status: 'active' }, occurredAt: Date.now() });
            }
          });
        }
        return container;
      };
      const fifoContainer = await controlled({ url: `${url}?delay=5`, ordering: 'fifo' }, opts.fifoEvents);
      await ask(receiver, 'reset');
      const fifoWorker = await startDeliveryWorker(fifoContainer, { ca });
      await waitForCount(receiver, opts.fifoEvents, 300_000);
      const fifo = await ask(receiver, 'arrivals');
      await fifoWorker.stop();
      await fifoContainer.close();
      const fifoSeconds = (fifo.arrivals.at(-1) - fifo.arrivals[0]) / 1000;
      results.fifo = { events: opts.fifoEvents, receiverDelayMs: 5, perSecond: Math.round((fifo.count - 1) / fifoSeconds), maxInFlight: fifo.maxOpen };
      console.log(`fifo subscription, receiver answering in 5 ms: ${results.fifo.perSecond} deliveries/s, at most ${fifo.maxOpen} in flight`);

      const limit = 50;
      const rateContainer = await controlled({ url, rate_limit: limit }, limit * (opts.rateSeconds + 10));
      await ask(receiver, 'reset');
      const rateWorker = await startDeliveryWorker(rateContainer, { ca });
      await new Promise((r) => setTimeout(r, (opts.rateSeconds + 2) * 1000));
      const limited = await ask(receiver, 'arrivals');
      await rateWorker.stop();
      await rateContainer.close();
      const start = limited.arrivals[0];
      const inWindow = limited.arrivals.filter((t) => t >= start && t < start + opts.rateSeconds * 1000).length;
      let busiest = 0;
      for (let i = 0, j = 0; j < limited.arrivals.length; j++) {
        while (limited.arrivals[j] - limited.arrivals[i] >= 1000) i++;
        busiest = Math.max(busiest, j - i + 1);
      }
      results.rateLimit = { limit, seconds: opts.rateSeconds, perSecond: +(inWindow / opts.rateSeconds).toFixed(2), busiestSecond: busiest };
      console.log(`rate_limit ${limit}: ${results.rateLimit.perSecond} per second over ${opts.rateSeconds} s, busiest one-second window ${busiest}`);
    }

    // ------------------------------------------------------------ 4. memory with 100,000 pending
    if (!opts.skipMemory) {
      const memEnv = { ...baseEnv, DATA_DIR: path.join(tmp, 'mem') };
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
        env: { ...process.env, METRICS_PORT: '0', ...memEnv, NODE_EXTRA_CA_CERTS: certFile },
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
      const mem = await ask(receiver, 'count');
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
  console.log(`written ${path.relative(process.cwd(), out)}`);
}

if (process.argv[2] !== '--receiver') {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
