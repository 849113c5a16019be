import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, startServe, type ServeProcess } from '../helpers/cli.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUNNER = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
/** The scenarios that need the SDK's own fixtures (CONTRACT 17): expected to fail, listed with the reason for each. */
const BASELINE = path.join(ROOT, 'test/server/mcp-conformance-baseline.yml');

/**
 * The MCP project's own server conformance suite (`@modelcontextprotocol/conformance`) against a real `serve`,
 * with no unexpected failure. The runner cannot send credentials, so it talks to a small reverse proxy that adds
 * an API key, and the service's PUBLIC_BASE_URL is the proxy's, as it would be behind any proxy.
 */
describe('MCP conformance suite', () => {
  let serve: ServeProcess | null = null;
  let proxy: http.Server;
  let proxyUrl: string;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-mcp-conf-'));
    proxy = http.createServer();
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as AddressInfo).port;
    proxyUrl = `http://localhost:${port}`;
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'info', PUBLIC_BASE_URL: proxyUrl };
    const key: string = (await cliJson(['org', 'create', '--name', 'Conformance', '--owner-email', 'owner@example.com'], env)).api_key.key;
    serve = await startServe(env);
    const target = new URL(serve.address);
    proxy.on('request', (req, res) => {
      const upstream = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${key}` } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
  }, 120_000);

  afterAll(async () => {
    serve?.child.kill('SIGKILL');
    await serve?.exited;
    await new Promise<void>((resolve) => proxy?.close(() => resolve()));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('finds no unexpected failure and no stale expected one', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-mcp-results-'));
    try {
      const child = spawn(process.execPath, [RUNNER, 'server', '--url', `${proxyUrl}/mcp`, '--expected-failures', BASELINE], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      if (process.env.MCP_CONFORMANCE_VERBOSE) console.log(output);
      expect(code, output).toBe(0);
      // The scenarios the contract names ran and passed.
      for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) expect(output).toContain(scenario);
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  }, 300_000);
});
