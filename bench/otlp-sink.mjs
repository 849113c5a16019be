#!/usr/bin/env node
// A stand-in OTLP/HTTP collector for the tracing benchmark: accepts every export on 127.0.0.1:4318 (or
// the port given), answers 200 at once, and on SIGTERM prints how many exports and bytes it received.
//   node bench/otlp-sink.mjs &
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npm run bench -- --dialects sqlite
import http from 'node:http';

const port = Number(process.argv[2] ?? 4318);
let exports = 0;
let bytes = 0;
http
  .createServer((req, res) => {
    req.on('data', (chunk) => (bytes += chunk.length));
    req.on('end', () => {
      exports += 1;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  })
  .listen(port, '127.0.0.1', () => process.stdout.write(`otlp sink on http://127.0.0.1:${port}\n`));
process.on('SIGTERM', () => {
  process.stdout.write(`otlp sink: ${exports} exports, ${bytes} bytes\n`);
  process.exit(0);
});
