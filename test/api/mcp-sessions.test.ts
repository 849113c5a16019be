import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { describe, expect, it } from 'vitest';
import { createSessionCache, newSessionId, releaseAnsweredStreams, resumeSession, sessionBelongs } from '../../src/api/mcp/mcp-sessions.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

async function session(id: string) {
  const server = new Server({ name: 't', version: '1' }, { capabilities: { tools: {} } });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => id, enableJsonResponse: true });
  await server.connect(transport);
  return { server, transport };
}
const ping = (transport: WebStandardStreamableHTTPServerTransport, sessionId: string, id: number) =>
  transport.handleRequest(new Request('http://x/mcp', { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': sessionId } }), { parsedBody: { jsonrpc: '2.0', id, method: 'ping' } });

/** Sessions without memory (CONTRACT 17): ids bound to their caller, resumed anywhere, kept servers bounded and not leaking. */
describe('MCP sessions', () => {
  it('a session id is bound to the key or grant that started it', () => {
    const id = newSessionId('key_a');
    expect(sessionBelongs(id, 'key_a')).toBe(true);
    expect(sessionBelongs(id, 'key_b')).toBe(false);
    expect(sessionBelongs(`${id}.x`, 'key_a')).toBe(false);
    expect(sessionBelongs('not-a-session', 'key_a')).toBe(false);
    expect(newSessionId('key_a')).not.toBe(id);
  });

  it('a session resumed on a fresh transport answers, and answered requests leave nothing behind', async () => {
    const sid = newSessionId('key_a');
    const { transport } = await session(sid);
    resumeSession(transport, sid);
    const fields = transport as unknown as { _streamMapping: Map<string, unknown> };
    for (let i = 1; i <= 50; i++) {
      const answer = await ping(transport, sid, i);
      expect(answer.status).toBe(200);
      expect(JSON.parse(await answer.text())).toEqual({ jsonrpc: '2.0', id: i, result: {} });
      releaseAnsweredStreams(transport);
    }
    expect(fields._streamMapping.size).toBe(0);
    // Without the release, the SDK keeps one entry per request: the test would see 50 (the leak this guards).
    await (await ping(transport, sid, 51)).text();
    expect(fields._streamMapping.size).toBe(1);
  });

  it('keeps at most `max` sessions and closes idle ones', async () => {
    let now = 0;
    const cache = createSessionCache({ max: 2, idleMs: 1000, now: () => now });
    const a = await session('a');
    const b = await session('b');
    const c = await session('c');
    cache.keep('a', a);
    cache.keep('b', b);
    expect(cache.take('a')?.transport).toBe(a.transport);
    cache.keep('c', c);
    // 'b' was the least recently used.
    expect(cache.size()).toBe(2);
    expect(cache.take('b')).toBeUndefined();
    now = 5000;
    expect(cache.take('a')).toBeUndefined();
    expect(cache.take('c')).toBeUndefined();
    cache.closeAll();
  });
});
