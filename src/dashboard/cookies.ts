import type { FastifyReply } from 'fastify';
import type { Config } from '../config.js';

/**
 * Cookie names and flags (DASHBOARD 2). Over https the names carry the `__Host-` prefix, which browsers
 * accept only with `Secure`, `Path=/` and no `Domain`: a cookie a sibling subdomain cannot plant.
 */
export interface DashboardCookies {
  session: string;
  /** The pre-session CSRF secret, for forms shown before sign-in (login, password links, invitations). */
  csrf: string;
  secure: boolean;
  setSession(reply: FastifyReply, token: string, expiresAt: number): void;
  clearSession(reply: FastifyReply): void;
  setCsrf(reply: FastifyReply, secret: string): void;
}

export function dashboardCookies(config: Pick<Config, 'publicBaseUrl'>): DashboardCookies {
  const secure = config.publicBaseUrl.startsWith('https:');
  const prefix = secure ? '__Host-' : '';
  const session = `${prefix}ws_session`;
  const csrf = `${prefix}ws_csrf`;
  const base = { path: '/', httpOnly: true, secure, sameSite: 'lax' as const };
  return {
    session,
    csrf,
    secure,
    setSession(reply, token, expiresAt) {
      reply.setCookie(session, token, { ...base, expires: new Date(expiresAt) });
    },
    clearSession(reply) {
      reply.clearCookie(session, base);
    },
    setCsrf(reply, secret) {
      // A browser-session cookie: it only guards forms, and a new one is made whenever it is missing.
      reply.setCookie(csrf, secret, base);
    },
  };
}
