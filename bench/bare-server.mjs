// The physical limit: a bare node:http server answering a fixed JSON body (BARE_BODY_BYTES long, the
// size of one project object) on every request. No routing, no database, no framework.
import http from 'node:http';

const size = Number(process.env.BARE_BODY_BYTES ?? 200);
const filler = 'x'.repeat(Math.max(0, size - '{"id":"","pad":""}'.length));
const body = Buffer.from(JSON.stringify({ id: '', pad: filler }));

const server = http.createServer((req, res) => {
  // Drain any request body, as the API would, before answering.
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port} ${body.length}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
