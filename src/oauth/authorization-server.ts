import { hostOf } from '../lib/url-host.js';
import { createHmac, createPrivateKey, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Provider, { errors as oauthErrors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { Config } from '../config.js';
import type { Store } from '../db/store.js';
import type { AppResource } from '../db/schema.js';
import { newId } from '../lib/ids.js';
import type { SecretBox } from '../lib/secret-box.js';
import { OAUTH_SCOPES } from '../services/apps/app-scopes.js';
import { ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX } from '../services/apps/app-token-prefixes.js';
import { adapterFactory } from './oauth-adapter.js';

/** CONTRACT 17: access tokens live an hour, refresh tokens 30 days (rotated on every use). */
export const ACCESS_TOKEN_TTL_S = 3600;
export const REFRESH_TOKEN_TTL_S = 30 * 86_400;
/** How long an authorization code may wait for its exchange. */
export const CODE_TTL_S = 60;


/** Where the dashboard shows the consent for an interaction (the server sends the browser there). */
export const consentPath = (uid: string) => `/dashboard/authorize/${uid}`;

/** What the consent page shows and decides on (DASHBOARD 14). */
export interface ConsentRequest {
  uid: string;
  clientId: string;
  clientName: string;
  /** The host the browser goes back to: the person sees where the code goes. */
  redirectHost: string;
  resource: AppResource;
  /** The requested scopes the resource knows, space-separated. */
  scope: string;
}

export interface AuthorizationServer {
  /** `{PUBLIC_BASE_URL}/mcp` and `/v1`: the resources a token is bound to (RFC 8707). */
  readonly resources: Readonly<Record<AppResource, string>>;
  /** Serves /oauth/* and the discovery document: oidc-provider answers the request itself. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** The interaction behind a consent page, or null when it has expired or is not this browser's. */
  consentRequest(req: IncomingMessage, res: ServerResponse): Promise<ConsentRequest | null>;
  /** "Allow": a grant for the person with what the app asked, then the URL that takes the code back to the app. */
  allow(req: IncomingMessage, res: ServerResponse, userId: string): Promise<{ redirectTo: string; grantId: string }>;
  /** "Deny": the URL that tells the app `access_denied`. */
  deny(req: IncomingMessage, res: ServerResponse): Promise<string>;
}

export interface AuthorizationServerDeps {
  config: Config;
  store: Store;
  secretBox: SecretBox;
  now: () => number;
  /** A grant ended inside the server (reuse of a refresh token or code, a revoked token). */
  grantEnded(grantId: string): Promise<void>;
  /** Whether the user may sign in to an app now (active); undefined ends a refresh as well. */
  activeUser(userId: string): Promise<boolean>;
  logError(err: unknown, message: string): void;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** CONTRACT 17: redirect URIs are https, or http on a loopback address; nothing else is registered. */
function checkRedirectUris(uris: unknown): void {
  if (!Array.isArray(uris)) return;
  for (const uri of uris) {
    const parsed = typeof uri === 'string' ? URL.parse(uri) : null;
    if (!parsed) throw new oauthErrors.InvalidRedirectUri('redirect_uris must only contain valid URIs');
    if (parsed.protocol === 'https:') continue;
    if (parsed.protocol === 'http:' && LOOPBACK.has(parsed.hostname)) continue;
    throw new oauthErrors.InvalidRedirectUri('redirect_uris must use https, or http on a loopback address (localhost, 127.0.0.1, [::1])');
  }
}

/** An Ed25519 signing key drawn from the shared secret: the same on every instance, and never an RSA key to rotate. */
function signingJwk(secret: Buffer) {
  const seed = createHmac('sha256', secret).update('oauth signing key').digest();
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const jwk = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'jwk' });
  return { ...jwk, alg: 'EdDSA', use: 'sig', kid: createHmac('sha256', secret).update('kid').digest('hex').slice(0, 16) };
}

function firstResource(value: unknown): string | undefined {
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/**
 * The OAuth 2.1 authorization server of CONTRACT 17: `oidc-provider` (OpenID certified) configured as a plain
 * OAuth server with opaque tokens. It does the protocol (metadata, dynamic registration, the code flow with PKCE
 * S256 only, exact redirect URIs, RFC 8707 resources, refresh rotation with reuse detection, RFC 7009
 * revocation); this module decides its settings, its storage (oauth-adapter.ts) and the consent the dashboard
 * shows. Why this library and not `@node-oauth/oauth2-server`: docs/decisions.md, "Issue 45".
 */
export async function createAuthorizationServer(deps: AuthorizationServerDeps): Promise<AuthorizationServer> {
  const { config, store, secretBox } = deps;
  const base = config.publicBaseUrl;
  const resources = { mcp: `${base}/mcp`, v1: `${base}/v1` } as const;

  // One secret for every instance: cookies signed on one are read on another, and the key that would sign an
  // ID token is the same everywhere. Written by the first instance to start, sealed like webhook secrets.
  const stored = await store.repos.oauth.serverSecret('oauth', secretBox.seal(randomBytes(32).toString('base64url')), deps.now());
  const secret = Buffer.from(secretBox.open(stored), 'base64url');
  const cookieKey = createHmac('sha256', secret).update('oauth cookies').digest('base64url');

  const scopeList = OAUTH_SCOPES.join(' ');
  const configuration: Configuration = {
    adapter: adapterFactory({ store, secretBox, now: deps.now, grantEnded: deps.grantEnded, resources }),
    clients: [],
    async findAccount(_ctx, sub) {
      if (!(await deps.activeUser(sub))) return undefined;
      return { accountId: sub, claims: async () => ({ sub }) };
    },
    routes: {
      authorization: '/oauth/authorize',
      token: '/oauth/token',
      registration: '/oauth/register',
      revocation: '/oauth/revoke',
      jwks: '/oauth/jwks',
      userinfo: '/oauth/userinfo',
      end_session: '/oauth/session/end',
      introspection: '/oauth/introspect',
      pushed_authorization_request: '/oauth/par',
      code_verification: '/oauth/device',
      device_authorization: '/oauth/device/auth',
      backchannel_authentication: '/oauth/backchannel',
      challenge: '/oauth/challenge',
    },
    scopes: [...OAUTH_SCOPES],
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'EdDSA',
    },
    enabledJWA: { idTokenSigningAlgValues: ['EdDSA'] },
    jwks: { keys: [signingJwk(secret) as never] },
    cookies: { keys: [cookieKey], long: { signed: true, httpOnly: true, sameSite: 'lax' }, short: { signed: true, httpOnly: true, sameSite: 'lax' } },
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_S,
      AuthorizationCode: CODE_TTL_S,
      RefreshToken: REFRESH_TOKEN_TTL_S,
      // The connection itself: a year, or until revoked; its refresh token lapses after 30 days unused.
      Grant: 365 * 86_400,
      Interaction: 3600,
      // The server's own sign-in lasts a minute: every authorization shows the consent page, where the dashboard's
      // session (and every sign-in rule behind it) decides who is allowing.
      Session: 60,
      IdToken: 3600,
    },
    // Every authorization asks the person (CONTRACT 17): only the grant this very consent made counts, an
    // earlier one is never reused silently.
    async loadExistingGrant(ctx) {
      const grantId = (ctx.oidc.result as { consent?: { grantId?: string } } | undefined)?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // A browser-based client (an MCP inspector) calls the token endpoint from its own origin; PKCE guards the code.
    clientBasedCORS: () => true,
    extraClientMetadata: {
      // Listed so that the validator runs on every registration; it checks the redirect URIs the contract allows.
      properties: ['software_id'],
      validator(_ctx, key, _value, metadata) {
        if (key === 'software_id') checkRedirectUris(metadata.redirect_uris);
      },
    },
    features: {
      devInteractions: { enabled: false },
      registration: {
        enabled: config.oauthDynamicRegistration,
        idFactory: () => newId('app'),
      },
      revocation: { enabled: true },
      introspection: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        enabled: true,
        // MCP clients name the resource (the protocol asks them to); one that does not gets /mcp.
        defaultResource: () => resources.mcp,
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx, indicator) {
          if (indicator !== resources.mcp && indicator !== resources.v1) throw new oauthErrors.InvalidTarget(`resource must be ${resources.mcp} or ${resources.v1}`);
          return { scope: scopeList, audience: indicator, accessTokenFormat: 'opaque', accessTokenTTL: ACCESS_TOKEN_TTL_S };
        },
      },
    },
    interactions: { url: (_ctx, interaction) => consentPath(interaction.uid) },
    async renderError(ctx: KoaContextWithOIDC, out) {
      ctx.type = 'html';
      const escape = (s: unknown) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
      ctx.body =
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
        '<title>Authorization failed · Workspace</title><link rel="stylesheet" href="/dashboard/assets/app.css"></head>' +
        `<body><main class="auth-page"><h1>The app's request cannot be answered</h1><p>${escape(out.error)}: ${escape(out.error_description)}</p>` +
        '<p><a href="/dashboard">Back to the dashboard</a></p></main></body></html>';
    },
  };

  const provider = new Provider(base, configuration);
  // The routes set X-Forwarded-Proto and -Host to PUBLIC_BASE_URL's (oauth-routes.ts): addresses are always the public ones.
  provider.proxy = true;
  provider.on('server_error', (_ctx, err) => deps.logError(err, 'oauth server error'));

  // Tokens say what they are, as keys do (`wsk_`): `wsa_` access, `wsr_` refresh (CONTRACT 17).
  prefixTokenIds(provider.AccessToken.prototype as unknown as TokenIds, ACCESS_TOKEN_PREFIX);
  prefixTokenIds(provider.RefreshToken.prototype as unknown as TokenIds, REFRESH_TOKEN_PREFIX);
  // A grant is a connected app: its id is not a secret and reads like the service's other ids.
  (provider.Grant.prototype as unknown as TokenIds).generateTokenId = () => newId('oag');

  const callback = provider.callback();

  // The server builds every address it hands out (metadata, redirects, cookies) from the request: it is told the
  // public one, whatever the Host header or a proxy says, so they always name PUBLIC_BASE_URL.
  const publicUrl = new URL(base);
  function asPublic(req: IncomingMessage): IncomingMessage {
    req.headers.host = publicUrl.host;
    req.headers['x-forwarded-host'] = publicUrl.host;
    req.headers['x-forwarded-proto'] = publicUrl.protocol.slice(0, -1);
    if (!config.trustProxy) delete req.headers['x-forwarded-for'];
    return req;
  }

  /** What the app asked for: its resource (RFC 8707; /mcp when it named none) and the scopes the service knows. */
  function requestedOf(params: Record<string, unknown>): { indicator: string; scope: string } {
    const requested = String(params.scope ?? '')
      .split(' ')
      .filter((item) => OAUTH_SCOPES.includes(item));
    return { indicator: firstResource(params.resource) ?? resources.mcp, scope: [...new Set(requested)].join(' ') };
  }

  async function clientOf(clientId: string) {
    const client = await provider.Client.find(clientId);
    if (!client) throw new oauthErrors.InvalidClient('the app is no longer registered');
    return client;
  }

  return {
    resources,
    async handle(req, res) {
      await callback(asPublic(req), res);
    },

    async consentRequest(req, res) {
      let details;
      try {
        details = await provider.interactionDetails(asPublic(req), res);
      } catch {
        return null;
      }
      const params = details.params as Record<string, unknown>;
      const client = await provider.Client.find(String(params.client_id));
      if (!client) return null;
      const { indicator, scope } = requestedOf(params);
      const redirectUri = String(params.redirect_uri ?? client.redirectUris?.[0] ?? '');
      return {
        uid: details.uid,
        clientId: client.clientId,
        clientName: typeof client.clientName === 'string' && client.clientName.trim() !== '' ? client.clientName : 'Unnamed app',
        redirectHost: hostOf(redirectUri),
        resource: indicator === resources.v1 ? 'v1' : 'mcp',
        scope,
      };
    },

    async allow(req, res, userId) {
      const details = await provider.interactionDetails(asPublic(req), res);
      const params = details.params as Record<string, unknown>;
      const clientId = String(params.client_id);
      await clientOf(clientId);
      const { indicator, scope } = requestedOf(params);
      const grant = new provider.Grant({ accountId: userId, clientId });
      // The scopes are listed in the server's `scopes` (so that metadata names them), which makes it ask for them
      // as OpenID scopes too: the one consent covers both.
      grant.addResourceScope(indicator, scope);
      if (scope !== '') grant.addOIDCScope(scope);
      const grantId = await grant.save();
      const redirectTo = await provider.interactionResult(req, res, { login: { accountId: userId, remember: false }, consent: { grantId } }, { mergeWithLastSubmission: false });
      return { redirectTo, grantId };
    },

    async deny(req, res) {
      return provider.interactionResult(asPublic(req), res, { error: 'access_denied', error_description: 'The person denied the request.' }, { mergeWithLastSubmission: false });
    },
  };
}

/** oidc-provider's models draw their ids here (lib/models/base_model.js); a token's value is its id. */
interface TokenIds {
  generateTokenId(): string;
}

function prefixTokenIds(prototype: TokenIds, prefix: string): void {
  const generate = prototype.generateTokenId;
  prototype.generateTokenId = function (this: unknown) {
    return prefix + generate.call(this);
  };
}

/**
 * The server built on first use: building it reads (or writes) the shared secret, which needs the migrated
 * schema, and most processes (the worker, most CLI commands) never serve OAuth.
 */
export function lazyAuthorizationServer(deps: AuthorizationServerDeps): AuthorizationServer {
  let built: Promise<AuthorizationServer> | null = null;
  const server = () => {
    built ??= createAuthorizationServer(deps).catch((err: unknown) => {
      built = null;
      throw err;
    });
    return built;
  };
  const base = deps.config.publicBaseUrl;
  return {
    resources: { mcp: `${base}/mcp`, v1: `${base}/v1` },
    handle: async (req, res) => (await server()).handle(req, res),
    consentRequest: async (req, res) => (await server()).consentRequest(req, res),
    allow: async (req, res, userId) => (await server()).allow(req, res, userId),
    deny: async (req, res) => (await server()).deny(req, res),
  };
}
