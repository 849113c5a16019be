import { createHash, randomBytes } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';

/**
 * Session ids (Mcp-Session-Id) carry no state: `<random>.<check>`, the check binding the session to the caller's
 * key or grant, so any instance accepts a session another one started and a session of one caller is not
 * another's. A session id is no credential: every request is authenticated on its own.
 */
export function newSessionId(keyId: string): string {
  const nonce = randomBytes(16).toString('base64url');
  return `${nonce}.${sessionCheck(nonce, keyId)}`;
}
const sessionCheck = (nonce: string, keyId: string) => createHash('sha256').update(`${nonce}:${keyId}`).digest('base64url').slice(0, 22);

export function sessionBelongs(id: string, keyId: string): boolean {
  const [nonce, check, extra] = id.split('.');
  return extra === undefined && nonce !== undefined && check !== undefined && /^[A-Za-z0-9_-]{22}$/.test(nonce) && check === sessionCheck(nonce, keyId);
}

/**
 * The SDK's transport keeps a session in memory; a session this process did not start (or has forgotten) is
 * resumed on a fresh transport. The SDK version is pinned: `sessionId` and `_initialized` are its fields.
 */
export function resumeSession(transport: WebStandardStreamableHTTPServerTransport, sessionId: string): void {
  const fields = transport as unknown as { sessionId?: string; _initialized: boolean };
  fields.sessionId = sessionId;
  fields._initialized = true;
}

export interface McpSession {
  readonly server: Server;
  readonly transport: WebStandardStreamableHTTPServerTransport;
}

interface Held extends McpSession {
  usedAt: number;
}

/**
 * The SDK server and transport of recent sessions, kept so that a session's next request does not build them
 * again (most of an MCP call's cost: docs/benchmarks.md, issue 45). A cache only: a session it does not hold
 * is resumed on new ones, on this instance or any other. Bounded; idle sessions are closed.
 */
export function createSessionCache(options: { max?: number; idleMs?: number; now?: () => number } = {}) {
  const max = options.max ?? 1000;
  const idleMs = options.idleMs ?? 10 * 60_000;
  const now = options.now ?? Date.now;
  const held = new Map<string, Held>();

  function close(session: McpSession): void {
    void session.transport.close();
    void session.server.close();
  }

  return {
    /** The session's server and transport, moved to the newest end; undefined when not held (or gone idle). */
    take(sessionId: string): McpSession | undefined {
      const found = held.get(sessionId);
      if (!found) return undefined;
      held.delete(sessionId);
      if (now() - found.usedAt > idleMs) {
        close(found);
        return undefined;
      }
      found.usedAt = now();
      held.set(sessionId, found);
      return found;
    },
    keep(sessionId: string, session: McpSession): void {
      held.set(sessionId, { ...session, usedAt: now() });
      // Map order is use order: the oldest go first, then any idle ones at the old end.
      for (const [id, entry] of held) {
        if (held.size <= max && now() - entry.usedAt <= idleMs) break;
        held.delete(id);
        close(entry);
      }
    },
    size: () => held.size,
    closeAll(): void {
      for (const entry of held.values()) close(entry);
      held.clear();
    },
  };
}

/**
 * In JSON-response mode the SDK's transport (1.32.2) never removes a request's stream entry once it answered,
 * so a kept session grows by one entry (about 4 KB) per request. After an answer, entries no pending request
 * points at are released. In-flight requests keep theirs: each is named in `_requestToStreamMapping` until
 * answered.
 */
export function releaseAnsweredStreams(transport: WebStandardStreamableHTTPServerTransport): void {
  const fields = transport as unknown as { _streamMapping: Map<string, { resolveJson?: unknown }>; _requestToStreamMapping: Map<unknown, string> };
  if (fields._streamMapping.size === 0) return;
  const pending = new Set(fields._requestToStreamMapping.values());
  for (const [streamId, stream] of fields._streamMapping) {
    if (stream.resolveJson !== undefined && !pending.has(streamId)) fields._streamMapping.delete(streamId);
  }
}
