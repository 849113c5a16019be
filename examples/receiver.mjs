#!/usr/bin/env node
// A webhook receiver for Workspace Service: verifies X-Service-Signature over the raw body (constant time),
// answers 2xx fast, and processes each event once even though deliveries are at least once.
//
//   WEBHOOK_SECRET=whsec_... PORT=8443 TLS_KEY=key.pem TLS_CERT=cert.pem node examples/receiver.mjs
//   (without TLS_KEY/TLS_CERT it serves plain HTTP, e.g. behind a TLS-terminating proxy)
//
// Plain Node: no dependency on this package. Inside a Node project that installs it, the same check is
//   import { verifySignature } from 'workspace-service';
import { createHmac, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('set WEBHOOK_SECRET to the secret returned when the webhook was created');
  process.exit(1);
}
const port = Number(process.env.PORT ?? 8443);
const MAX_BODY = 1024 * 1024;

/** Constant-time check of the hex HMAC-SHA256 of the raw bytes. */
function verifySignature(rawBody, header, key) {
  if (typeof header !== 'string' || !/^[0-9a-f]{64}$/i.test(header)) return false;
  const expected = Buffer.from(createHmac('sha256', key).update(rawBody).digest('hex'));
  const given = Buffer.from(header.toLowerCase());
  return expected.length === given.length && timingSafeEqual(expected, given);
}

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
  console.log(`${headers['x-service-event']} ${headers['x-service-event-id']} (attempt ${headers['x-service-delivery-attempt']})`, JSON.stringify(event.data));
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
    const raw = Buffer.concat(chunks); // verify these bytes, before any JSON parsing
    if (!verifySignature(raw, req.headers['x-service-signature'], secret)) {
      return res.writeHead(401, { 'content-type': 'text/plain' }).end('bad signature');
    }
    const eventId = req.headers['x-service-event-id'];
    if (typeof eventId !== 'string' || !firstTime(eventId)) {
      // A retry or replay of an event already handled: acknowledge it so it is not sent again.
      return res.writeHead(200, { 'content-type': 'text/plain' }).end('duplicate');
    }
    let event;
    try {
      event = JSON.parse(raw.toString('utf8'));
    } catch {
      seen.delete(eventId);
      return res.writeHead(400).end('not JSON');
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
