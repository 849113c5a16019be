import * as client from 'openid-client';
import { fetch as undiciFetch, type Dispatcher } from 'undici';
import { assertPublicWebhookUrl, createGuardedAgent, SsrfBlockedError } from '../lib/ssrf.js';

/** What the provider said about the person, after every check passed. */
export interface OidcClaims {
  issuer: string;
  subject: string;
  email: string | null;
  /** `email_verified` exactly as given: only `true` vouches for the address. */
  emailVerified: boolean | null;
  name: string | null;
}

export interface OidcConnection {
  /** Changes whenever the connection is saved: the cached discovery is keyed by it. */
  cacheKey: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
}

export interface OidcChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** Set for "Confirm it's you": the provider must have signed the person in just now. */
  maxAgeSeconds?: number;
}

/** A refusal a person can act on: the provider's or the token's, in words; never a stack or a secret. */
export class OidcError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OidcError';
  }
}

export interface OidcClientOptions {
  /** SSO_ALLOW_PRIVATE_NETWORKS: issuers on loopback and private addresses (an identity provider inside the company). */
  allowPrivateNetworks: boolean;
  /** Trusted CA(s) replacing Node's (tests with a self-signed provider); production uses NODE_EXTRA_CA_CERTS. */
  ca?: string | Buffer | (string | Buffer)[];
  /** Discovery documents are fetched again after this long (default 1 hour). */
  cacheTtlMs?: number;
  now?: () => number;
}

export type OidcClient = ReturnType<typeof createOidcClient>;

const TIMEOUT_SECONDS = 10;
const CACHE_LIMIT = 1000;

/**
 * The relying party (DASHBOARD 12), built on `openid-client`: discovery, the code flow with PKCE (S256),
 * `state` and `nonce`, and the ID token's signature (the issuer's JWKS), `iss`, `aud`, `exp` and `nonce`, all
 * checked by the library, never by hand. Every request goes through the SSRF-guarded agent the webhooks use,
 * so an issuer (and the endpoints its document names) must be public unless the operator allows private ones.
 * Discovered configurations are cached per connection version, with the JWKS the library keeps in them.
 */
export function createOidcClient(options: OidcClientOptions) {
  const dispatcher: Dispatcher = createGuardedAgent({
    allowPrivate: options.allowPrivateNetworks,
    connectTimeoutMs: TIMEOUT_SECONDS * 1000,
    ...(options.ca !== undefined ? { ca: options.ca } : {}),
  });
  const ttl = options.cacheTtlMs ?? 60 * 60 * 1000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { config: Promise<client.Configuration>; at: number }>();

  const guardedFetch: client.CustomFetch = (url, init) =>
    undiciFetch(url, { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher }) as unknown as Promise<Response>;

  function checkIssuerUrl(issuer: string): URL {
    let url: URL;
    try {
      url = new URL(issuer);
    } catch {
      throw new OidcError('the issuer URL is not a valid URL');
    }
    if (url.protocol !== 'https:') throw new OidcError('the issuer URL must start with https://');
    if (url.search || url.hash || url.username || url.password) throw new OidcError('the issuer URL must not have a query, a fragment or credentials');
    try {
      assertPublicWebhookUrl(url, options.allowPrivateNetworks);
    } catch (error) {
      if (error instanceof SsrfBlockedError) throw new OidcError(`the issuer's host is not public (${error.shownMessage}); an operator may allow private issuers with SSO_ALLOW_PRIVATE_NETWORKS=true`);
      throw error;
    }
    return url;
  }

  async function discover(connection: OidcConnection): Promise<client.Configuration> {
    const url = checkIssuerUrl(connection.issuer);
    let config: client.Configuration;
    try {
      config = await client.discovery(url, connection.clientId, connection.clientSecret, client.ClientSecretPost(connection.clientSecret), {
        [client.customFetch]: guardedFetch,
        timeout: TIMEOUT_SECONDS,
      });
    } catch (error) {
      throw new OidcError(`the issuer's discovery document (${url.href.replace(/\/$/, '')}/.well-known/openid-configuration) could not be used: ${reason(error)}`);
    }
    const metadata = config.serverMetadata();
    if (!metadata.authorization_endpoint || !metadata.token_endpoint || !metadata.jwks_uri) {
      throw new OidcError('the discovery document lacks an authorization, token or JWKS endpoint');
    }
    if (metadata.response_types_supported && !metadata.response_types_supported.includes('code')) throw new OidcError('the provider does not offer the authorization code flow');
    if (metadata.code_challenge_methods_supported && !metadata.code_challenge_methods_supported.includes('S256')) throw new OidcError('the provider does not offer PKCE with S256');
    config[client.customFetch] = guardedFetch;
    config.timeout = TIMEOUT_SECONDS;
    // The ID token's signature is checked against the issuer's JWKS even though it came straight from the
    // token endpoint over TLS (which OpenID Connect would allow to skip): DASHBOARD 12 asks for both.
    client.enableNonRepudiationChecks(config);
    return config;
  }

  function configuration(connection: OidcConnection): Promise<client.Configuration> {
    const key = `${connection.cacheKey}\u0000${connection.issuer}\u0000${connection.clientId}`;
    const hit = cache.get(key);
    if (hit && now() - hit.at < ttl) return hit.config;
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
    const config = discover(connection);
    cache.set(key, { config, at: now() });
    // A failed discovery is not kept: the next sign-in asks again.
    config.catch(() => cache.delete(key));
    return config;
  }

  return {
    /** Discovery, checked (on "Save connection"): throws OidcError with the reason. */
    async check(connection: OidcConnection): Promise<void> {
      await discover(connection);
    },

    /** Where to send the browser: the code flow with S256, `state`, `nonce`; `prompt=login` when a fresh sign-in is wanted. */
    async authorizationUrl(connection: OidcConnection, redirectUri: string, checks: OidcChecks & { loginHint?: string | null }): Promise<URL> {
      const config = await configuration(connection);
      const params: Record<string, string> = {
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'openid email profile',
        state: checks.state,
        nonce: checks.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
        code_challenge_method: 'S256',
      };
      if (checks.loginHint) params.login_hint = checks.loginHint;
      if (checks.maxAgeSeconds !== undefined) {
        params.prompt = 'login';
        params.max_age = String(checks.maxAgeSeconds);
      }
      return client.buildAuthorizationUrl(config, params);
    },

    /**
     * The callback: the code exchanged (with the PKCE verifier), the ID token checked against the issuer's
     * keys, audience, expiry and our nonce; the e-mail from the ID token, or from userinfo when it has none.
     */
    async exchange(connection: OidcConnection, callbackUrl: URL, checks: OidcChecks): Promise<OidcClaims> {
      const config = await configuration(connection);
      try {
        const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          idTokenExpected: true,
          ...(checks.maxAgeSeconds !== undefined ? { maxAge: checks.maxAgeSeconds } : {}),
        });
        const idToken = tokens.claims();
        if (!idToken) throw new OidcError('the provider returned no ID token');
        let email = typeof idToken.email === 'string' ? idToken.email : null;
        let emailVerified = emailVerifiedOf(idToken);
        let name = typeof idToken.name === 'string' ? idToken.name : null;
        if (email === null && tokens.access_token) {
          const info = await client.fetchUserInfo(config, tokens.access_token, idToken.sub);
          email = typeof info.email === 'string' ? info.email : null;
          emailVerified = emailVerifiedOf(info);
          name ??= typeof info.name === 'string' ? info.name : null;
        }
        return { issuer: idToken.iss, subject: idToken.sub, email, emailVerified, name };
      } catch (error) {
        if (error instanceof OidcError) throw error;
        throw new OidcError(reason(error));
      }
    },

    close(): Promise<void> {
      return dispatcher.close();
    },
  };
}

/**
 * `email_verified` as given; without it, Entra ID's optional claim `xms_edov` (the email's domain owner verified
 * it), which Microsoft documents for exactly this decision. Anything else is not a yes.
 */
function emailVerifiedOf(claims: Record<string, unknown>): boolean | null {
  if (typeof claims.email_verified === 'boolean') return claims.email_verified;
  if (claims.xms_edov === true || claims.xms_edov === '1' || claims.xms_edov === 1) return true;
  return null;
}

/** The library's own words for what failed (they name the claim or the step), the provider's error code, or the network's. */
function reason(error: unknown): string {
  if (error instanceof client.AuthorizationResponseError) return `the provider answered ${error.error}${error.error_description ? ` (${error.error_description})` : ''}`;
  if (error instanceof client.ResponseBodyError) return `the provider answered ${error.error}${error.error_description ? ` (${error.error_description})` : ''}`;
  // What a name resolved to is never told (security review F11): the admin reading this could map the network.
  if (error instanceof SsrfBlockedError) return `the provider's host is not public (${error.shownMessage}); an operator may allow private issuers with SSO_ALLOW_PRIVATE_NETWORKS=true`;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof SsrfBlockedError) return `the provider's host is not public (${cause.shownMessage}); an operator may allow private issuers with SSO_ALLOW_PRIVATE_NETWORKS=true`;
  if (error instanceof Error) {
    // openid-client wraps oauth4webapi's check in a general message; the check's own names the claim.
    if (cause instanceof Error && cause.name === 'OperationProcessingError') return cause.message;
    const code = (cause as { code?: string } | undefined)?.code;
    if (error.name === 'TypeError' && code) return `could not connect (${code})`;
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'the provider did not answer in time';
    return error.message;
  }
  return 'unknown error';
}
