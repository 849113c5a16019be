import type { Dispatcher } from 'undici';
import { createGuardedAgent } from '../lib/ssrf.js';

export interface DeliveryAgentOptions {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS. */
  allowPrivateNetworks: boolean;
  /** Connect + TLS handshake deadline (the attempt's own deadline also covers it). */
  connectTimeoutMs: number;
  /** Trusted CA(s) replacing Node's (tests with a self-signed receiver); production uses NODE_EXTRA_CA_CERTS. */
  ca?: string | Buffer | (string | Buffer)[];
  /** Sockets per origin: the per-subscription concurrency is the most one origin can use from one subscription. */
  connectionsPerOrigin?: number;
}

/**
 * The one place the worker's HTTP client is made: an undici Agent with keep-alive pools per origin that
 * connects only to addresses the SSRF guard has checked.
 */
export function createDeliveryAgent(options: DeliveryAgentOptions): Dispatcher {
  return createGuardedAgent({
    allowPrivate: options.allowPrivateNetworks,
    connectTimeoutMs: options.connectTimeoutMs,
    ...(options.ca !== undefined ? { ca: options.ca } : {}),
    ...(options.connectionsPerOrigin !== undefined ? { connections: options.connectionsPerOrigin } : {}),
    keepAliveTimeoutMs: 30_000,
  });
}
