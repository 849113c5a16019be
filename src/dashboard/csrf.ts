import { createHmac } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { safeEqual } from '../lib/crypto.js';

/**
 * Synchroniser tokens without server state: a form's token is an HMAC of a secret only this browser holds
 * in an HttpOnly cookie (the session token once signed in, a random pre-session secret before). A page on
 * another site can make the browser send the cookie but can neither read it nor compute the token.
 */
export function csrfToken(secret: string): string {
  return createHmac('sha256', secret).update('workspace-dashboard-csrf-v1').digest('base64url');
}

export function csrfMatches(secret: string, given: unknown): boolean {
  return typeof given === 'string' && given.length > 0 && given.length <= 128 && safeEqual(csrfToken(secret), given);
}

/**
 * Defence in depth beside the token: a browser that says the request comes from another site
 * (`Sec-Fetch-Site: cross-site`/`same-site`, or an `Origin` that is not ours) is refused outright.
 */
export function isCrossSite(request: FastifyRequest, ownOrigins: readonly string[]): boolean {
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') return true;
  const origin = request.headers.origin;
  // `Origin: null` is what browsers send for our own forms under `Referrer-Policy: no-referrer`: it names no
  // site, so Sec-Fetch-Site and the token decide.
  if (typeof origin === 'string' && origin !== '' && origin !== 'null') {
    const requestOrigin = `${request.protocol}://${request.host}`;
    return origin !== requestOrigin && !ownOrigins.includes(origin);
  }
  return false;
}
