import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';
import { Agent, fetch } from 'undici';
import type { TestCertificate } from './https-receiver.js';

export interface TestAccount {
  email?: string;
  email_verified?: boolean;
  /** Entra ID's "email domain owner verified", sent instead of email_verified. */
  xms_edov?: boolean;
  name?: string;
}

/** Rewrites the ID token the token endpoint returns: new claims, signed with the provider's key unless `key` says otherwise. */
export type IdTokenTamper = (claims: JWTPayload) => { claims: JWTPayload; key?: CryptoKey };

export interface TestOidcProvider {
  /** `https://localhost:PORT` */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** People at the provider, by their login (which is also their subject). */
  accounts: Map<string, TestAccount>;
  /** Set to rewrite the next ID tokens (wrong audience, expired, another key…); null for the real ones. */
  tamper: IdTokenTamper | null;
  /** A key the provider does not publish (for "signed by another key"). */
  otherKey: CryptoKey;
  /** How many times the token endpoint was called. */
  tokenRequests: number;
  /** Every `client_secret` the token endpoint received, right or wrong (a provider that records what it is sent). */
  receivedSecrets: string[];
  /**
   * Plays the person's browser at the provider: follows the authorization URL, signs in on the development
   * login form as `login`, and returns the URL the provider sends the browser back to (never contacted).
   */
  signInAt(authorizationUrl: string, login: string): Promise<URL>;
  close(): Promise<void>;
}

/**
 * A real OpenID provider for the tests: `oidc-provider` (certified) over HTTPS with the test certificate,
 * its development login form (any password), consent granted without asking, PKCE required, claims
 * `email`, `email_verified` and `name` (from userinfo, as the provider's default puts them, not in the ID
 * token). The token endpoint can be made to return a tampered ID token.
 */
export async function startOidcProvider(cert: TestCertificate, options: { redirectUri: string; host?: string; clientId?: string; clientSecret?: string }): Promise<TestOidcProvider> {
  const server = https.createServer({ key: cert.key, cert: cert.cert });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `https://${options.host ?? 'localhost'}:${port}`;
  const clientId = options.clientId ?? 'workspace-test';
  const clientSecret = options.clientSecret ?? 'a client secret for tests only';
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const other = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const accounts = new Map<string, TestAccount>();

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [jwk] },
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified', 'xms_edov'], profile: ['name'] },
    cookies: { keys: ['cookie key for the test provider'] },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, id) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...account }) };
    },
    // Consent granted without a screen: the organisation's own provider, as companies configure them.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });

  const handle: TestOidcProvider = {
    issuer,
    clientId,
    clientSecret,
    accounts,
    tamper: null,
    otherKey: other.privateKey,
    tokenRequests: 0,
    receivedSecrets: [],
    async signInAt(authorizationUrl, login) {
      const jar = new Map<string, string>();
      const dispatcher = new Agent({ connect: { ca: cert.cert } });
      const go = async (url: string, init: { method?: string; body?: URLSearchParams } = {}) => {
        const res = await fetch(url, {
          method: init.method ?? 'GET',
          redirect: 'manual',
          dispatcher,
          headers: {
            cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
            ...(init.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          },
          ...(init.body ? { body: init.body.toString() } : {}),
        });
        for (const line of res.headers.getSetCookie()) {
          const [pair] = line.split(';');
          const eq = pair!.indexOf('=');
          jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
        }
        return res;
      };
      try {
        let url = authorizationUrl;
        for (let hop = 0; hop < 10; hop++) {
          const res = await go(url);
          const location = res.headers.get('location');
          if (location) {
            const next = new URL(location, url);
            if (next.origin !== issuer) return next;
            url = next.href;
            continue;
          }
          const html = await res.text();
          const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
          if (!action || !html.includes('name="login"')) throw new Error(`the test provider answered ${res.status} without its login form: ${html.slice(0, 300)}`);
          const posted = await go(new URL(action, url).href, { method: 'POST', body: new URLSearchParams({ prompt: 'login', login, password: 'any' }) });
          const after = posted.headers.get('location');
          if (!after) throw new Error(`the test provider's login form answered ${posted.status}`);
          url = new URL(after, url).href;
        }
        throw new Error('too many redirects at the test provider');
      } finally {
        await dispatcher.close();
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path !== '/token') return;
    handle.tokenRequests++;
    const sent = (ctx.oidc as { body?: Record<string, unknown> } | undefined)?.body?.client_secret;
    if (typeof sent === 'string') handle.receivedSecrets.push(sent);
    const body = ctx.body as { id_token?: string } | undefined;
    if (!handle.tamper || !body?.id_token) return;
    const changed = handle.tamper(decodeJwt(body.id_token));
    ctx.body = { ...body, id_token: await new SignJWT(changed.claims).setProtectedHeader({ alg: 'RS256', kid: 'test-key', typ: 'JWT' }).sign(changed.key ?? privateKey) };
  });
  server.on('request', provider.callback());
  return handle;
}
