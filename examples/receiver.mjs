#!/usr/bin/env node
// A webhook receiver for Workspace Service: verifies each delivery with verifyWebhook (the Standard Webhooks
// signature over id, timestamp and raw body, a timestamp within 5 minutes, X-Service-Signature, all in
// constant time, and the event), answers 2xx fast, and processes each event once even though deliveries are
// at least once.
//
//   WEBHOOK_SECRET=whsec_... PORT=8443 TLS_KEY=key.pem TLS_CERT=cert.pem node examples/receiver.mjs
//   During a secret rotation: WEBHOOK_SECRET=whsec_new,whsec_old (both verify until the old one expires).
//   (without TLS_KEY/TLS_CERT it serves plain HTTP, e.g. behind a TLS-terminating proxy)
//
// It imports the package's client entry, so it runs inside a project that installs workspace-service (or in
// this repository after `npm run build`). In TypeScript the event is typed: `switch (event.event)` narrows
// `event.data` to that event's fields (docs/webhooks.md, "Verifying in TypeScript").
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { verifyWebhook, WebhookVerificationError } from 'workspace-service/client';

// Several secrets, comma-separated, while a rotation's window is open (docs/webhooks.md, "Rotating a secret").
const secret = process.env.WEBHOOK_SECRET?.split(',').map((s) => s.trim()).filter(Boolean);
if (!secret?.length) {
  console.error('set WEBHOOK_SECRET to the secret returned when the webhook was created');
  process.exit(1);
}
const port = Number(process.env.PORT ?? 8443);
const MAX_BODY = 1024 * 1024;

// De-duplication by X-Service-Event-Id. In production keep this in your database, written in the same
// transaction as the event's effect (a unique key on the event id); a Map with expiry shows the idea.
const seen = new Map();
const DEDUPE_MS = 7 * 24 * 3600 * 1000;
function firstTime(eventId) {
  const now = Date.now();
  for (const [id, at] of seen) {
    if (now - at < DEDUPE_MS) break;
    seen.delete(id);
  }
  if (seen.has(eventId)) return false;
  seen.set(eventId, now);
  return true;
}

function handleEvent(event, headers) {
  // Your work here. Keep it short, or queue it: the service waits at most 10 seconds for the status.
  const id = headers['x-service-event-id'];
  const attempt = headers['x-service-delivery-attempt'];
  switch (event.event) {
    case 'workflow.failed':
      console.log(`${event.event} ${id} (attempt ${attempt}): run ${event.data.run_id} ${event.data.error_code}: ${event.data.error}`);
      break;
    case 'task.assigned':
      console.log(`${event.event} ${id} (attempt ${attempt}): "${event.data.title}" to ${event.data.assignee_id}`);
      break;
    default:
      console.log(`${event.event} ${id} (attempt ${attempt})`, JSON.stringify(event.data));
  }
}

function onRequest(req, res) {
  if (req.method !== 'POST') return res.writeHead(405, { allow: 'POST' }).end();
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY) req.destroy();
    else chunks.push(chunk);
  });
  req.on('end', () => {
    const raw = Buffer.concat(chunks); // verify these bytes, before any JSON parsing of your own
    let event;
    try {
      event = verifyWebhook(raw, req.headers, secret);
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      // A bad or missing signature: not from the service (or another secret). Anything else: signed, but
      // not an event this code understands; the answer is recorded in the delivery history.
      const status = ['missing_signature', 'invalid_signature', 'timestamp_out_of_tolerance'].includes(err.reason) ? 401 : 400;
      return res.writeHead(status, { 'content-type': 'text/plain' }).end(err.reason);
    }
    // Only after verification, so forged requests cannot mark an event id as seen.
    const eventId = req.headers['x-service-event-id'];
    if (typeof eventId !== 'string' || !firstTime(eventId)) {
      // A retry or replay of an event already handled: acknowledge it so it is not sent again.
      return res.writeHead(200, { 'content-type': 'text/plain' }).end('duplicate');
    }
    try {
      handleEvent(event, req.headers);
    } catch (err) {
      seen.delete(eventId); // not handled: let the retry try again
      console.error(err);
      return res.writeHead(500).end();
    }
    res.writeHead(204).end();
  });
}

const server =
  process.env.TLS_KEY && process.env.TLS_CERT
    ? https.createServer({ key: fs.readFileSync(process.env.TLS_KEY), cert: fs.readFileSync(process.env.TLS_CERT) }, onRequest)
    : http.createServer(onRequest);
server.listen(port, () => console.log(`receiver listening on ${server.address().port}`));
