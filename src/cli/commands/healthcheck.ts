import http from 'node:http';
import { loadConfig } from '../../config.js';
import type { Command } from '../command.js';
import { EXIT_FAILURE, EXIT_OK, writeErr, writeJson, writeOut } from '../output.js';

/** A wildcard listen address is reached through loopback; a specific one as it is. */
function probeHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host;
}

const TIMEOUT_MS = 3000;

/** GET /readyz on this host's API; resolves with its status code, or a reason it could not be asked. */
function probe(host: string, port: number): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path: '/readyz', timeout: TIMEOUT_MS, headers: { 'user-agent': 'workspace-healthcheck' } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        if (body.length < 4096) body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (err) => resolve({ error: err.message }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => resolve({ error: err.message }));
  });
}

export const healthcheckCommand: Command = {
  name: 'healthcheck',
  summary: "exit 0 when this host's serve answers /readyz with 200 (for a container's HEALTHCHECK)",
  details: [
    'Asks http://HOST:PORT/readyz with the same HOST and PORT as `serve` (a wildcard HOST is asked on loopback),',
    'within 3 s. Exit 0 on 200; 1 otherwise, with the reason on stderr. Needs no curl in the image.',
  ].join('\n'),
  async run(input) {
    const config = loadConfig(input.env);
    const host = probeHost(config.host);
    const result = await probe(host, config.port);
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.port}/readyz`;
    const ok = 'status' in result && result.status === 200;
    if (input.json) {
      writeJson('status' in result ? { ok, url, status: result.status, body: safeJson(result.body) } : { ok, url, error: result.error });
    } else if (ok) {
      writeOut(`ready: ${url} answered 200`);
    } else {
      writeErr('status' in result ? `not ready: ${url} answered ${result.status} ${result.body}` : `not ready: ${url}: ${result.error}`);
    }
    return ok ? EXIT_OK : EXIT_FAILURE;
  },
};

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
