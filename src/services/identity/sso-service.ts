import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../../db/store.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { Clock } from '../../lib/time.js';
import type { Mailer } from '../../mail/mailer.js';
import type { RateLimiter } from '../../rate-limit/rate-limiter.js';
import type { TxtLookup } from '../../sso/dns-txt.js';
import type { OidcClient } from '../../sso/oidc-client.js';
import type { AuthEvents } from '../../db/auth-events.js';
import type { SessionsService } from './sessions-service.js';
import { createSsoNotices } from './sso-notices.js';
import { createSsoSettingsService } from './sso-settings-service.js';
import { createSsoSignInService } from './sso-sign-in-service.js';

export { DOMAIN_GRACE_MS, DOMAIN_RECHECK_MS, DOMAINS_PER_ORGANIZATION, TXT_PREFIX, TXT_VALUE_PREFIX } from './sso-settings-service.js';
export type { SaveConnectionInput, SsoDomainView, SsoSettingsView } from './sso-settings-service.js';
export { SSO_ATTEMPT_MS, SSO_START_LIMIT } from './sso-sign-in-service.js';
export type { SsoCallbackResult, SsoLinkView } from './sso-sign-in-service.js';

export interface SsoDeps {
  store: Store;
  clock: Clock;
  box: SecretBox;
  oidc: OidcClient;
  txt: TxtLookup;
  sessions: SessionsService;
  rateLimiter: RateLimiter;
  mailer: Mailer;
  authEvents: AuthEvents;
  publicBaseUrl: string;
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
}

/**
 * Single sign-on per organisation (DASHBOARD 12), one service for the doors: its settings (sso-settings-service.ts)
 * and its round trips (sso-sign-in-service.ts), sharing who may do what (sso-rules.ts) and the mails to owners
 * (sso-notices.ts). The sign-in gate for the other methods is the sessions service's.
 */
export function createSsoService(deps: SsoDeps) {
  const redirectUrl = `${deps.publicBaseUrl}/dashboard/sso/callback`;
  const notices = createSsoNotices(deps);
  return {
    ...createSsoSettingsService({ ...deps, notices, redirectUrl }),
    ...createSsoSignInService({ ...deps, notices, redirectUrl }),
    redirectUrl,
  };
}

export type SsoService = ReturnType<typeof createSsoService>;
