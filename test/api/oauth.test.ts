import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/lib/crypto.js';
import { cliActor as cliActorOf } from '../../src/services/access/actor.js';
import { DashboardClient } from '../helpers/dashboard.js';
import { authorizationRequest, clientOptions, connectApp, consent, discover, exchange, follow, mcpInitialize as initializeWith, REDIRECT_URI, refresh, register, visit } from '../helpers/oauth-flow.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/**
 * The OAuth 2.1 authorization server of CONTRACT 17, driven by an independent client library (oauth4webapi) over
 * the real routes: discovery from a 401, registration, consent, the code exchange, refresh rotation with reuse
 * detection, revocation, and each refusal the contract names.
 */
describe.each(testDialects())('OAuth 2.1 authorization server (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let member: { userId: string; key: string };

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Acme');
    member = await org.member('member');
  });
  afterAll(async () => env?.close());

  const mcpInitialize = (token: string) => initializeWith(env, token);

  it('is discovered from a 401 of /mcp: protected-resource metadata, then the authorization server metadata', async () => {
    const refused = await mcpInitialize('');
    expect(refused.status).toBe(401);
    const challenge = String(refused.headers['www-authenticate']);
    const base = env.config.publicBaseUrl;
    expect(challenge).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    const prm = await env.request('GET', '/.well-known/oauth-protected-resource/mcp');
    expect(prm.status).toBe(200);
    expect(prm.body.resource).toBe(`${base}/mcp`);
    expect(prm.body.authorization_servers).toEqual([base]);
    expect((await env.request('GET', '/.well-known/oauth-protected-resource')).body.resource).toBe(`${base}/mcp`);
    expect((await env.request('GET', '/.well-known/oauth-protected-resource/v1')).body.resource).toBe(`${base}/v1`);

    const as = await discover(env);
    expect(as.issuer).toBe(base);
    expect(as.authorization_endpoint).toBe(`${base}/oauth/authorize`);
    expect(as.token_endpoint).toBe(`${base}/oauth/token`);
    expect(as.registration_endpoint).toBe(`${base}/oauth/register`);
    expect(as.revocation_endpoint).toBe(`${base}/oauth/revoke`);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.scopes_supported).toEqual(expect.arrayContaining(['read', 'full', 'projects', 'projects:read']));
  });

  it('registers, asks consent, exchanges the code: wsa_ and wsr_ tokens, stored hashed, acting as the member', async () => {
    const { tokens, browser } = await connectApp(env, org.id, member.userId, { scope: 'projects:read tasks' });
    expect(tokens.access_token).toMatch(/^wsa_/);
    expect(tokens.refresh_token).toMatch(/^wsr_/);
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');

    // Stored hashed: neither value is in the database, their hashes are.
    const raw = await env.container.store.repos.oauth.findEntry('AccessToken', sha256Hex(tokens.access_token), Date.now());
    expect(raw).toBeDefined();
    expect(await env.container.store.repos.oauth.findEntry('AccessToken', tokens.access_token, Date.now())).toBeUndefined();

    const init = await mcpInitialize(tokens.access_token);
    expect(init.status, init.text).toBe(200);
    expect(init.body.result.serverInfo.name).toBe('workspace-service');
    // Bound to /mcp (RFC 8707): not a credential for /v1.
    const v1 = await env.request('GET', '/v1/projects', { key: tokens.access_token });
    expect(v1.status).toBe(401);
    expect(browser.sessionId).not.toBeNull();
  });

  it('rotates the refresh token on every use; a refresh token used twice revokes the whole grant', async () => {
    const { as, client, tokens } = await connectApp(env, org.id, member.userId, { scope: 'read' });
    const first = await refresh(env, as, client, tokens.refresh_token!);
    expect(first.access_token).toMatch(/^wsa_/);
    expect(first.refresh_token).toMatch(/^wsr_/);
    expect(first.refresh_token).not.toBe(tokens.refresh_token);
    expect((await mcpInitialize(first.access_token)).status).toBe(200);

    // The first refresh token again: refused, and everything the grant issued ends with it.
    await expect(refresh(env, as, client, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await mcpInitialize(first.access_token)).status).toBe(401);
    await expect(refresh(env, as, client, first.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    const revoked = (await env.request('GET', '/v1/audit-log?action=app.revoked&limit=100', { key: org.ownerKey })).body.data as Json[];
    expect(revoked.length).toBeGreaterThan(0);
  });

  it('revokes a token (RFC 7009): the access token and then the refresh token stop at once', async () => {
    const { as, client, tokens } = await connectApp(env, org.id, member.userId, { scope: 'read' });
    expect((await mcpInitialize(tokens.access_token)).status).toBe(200);
    const response = await oauth.revocationRequest(as, client, oauth.None(), tokens.access_token, clientOptions(env));
    await oauth.processRevocationResponse(response);
    expect((await mcpInitialize(tokens.access_token)).status).toBe(401);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, clientOptions(env)));
    await expect(refresh(env, as, client, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('a token for /v1 works on /v1 as an API key of its person would, and not on /mcp', async () => {
    const base = env.config.publicBaseUrl;
    const { tokens } = await connectApp(env, org.id, member.userId, { scope: 'projects tasks:read', resource: `${base}/v1` });
    const created = await env.request('POST', '/v1/projects', { key: tokens.access_token, body: { name: 'Made by an app' } });
    expect(created.status, created.text).toBe(201);
    // Outside the consented scope: forbidden, and nothing was made.
    const hook = await env.request('POST', '/v1/webhooks', { key: tokens.access_token, body: { url: 'https://example.com/h', events: ['project.created'] } });
    expect(hook.status).toBe(403);
    expect(hook.body.error.code).toBe('forbidden');
    // An app never mints an API key (it would outlive the hour-long token).
    const key = await env.request('POST', '/v1/api-keys', { key: tokens.access_token, body: { scope: 'read' } });
    expect(key.status).toBe(403);
    // The member's own role still bounds it: a member cannot invite.
    expect((await env.request('POST', '/v1/users', { key: tokens.access_token, body: { email: 'x@example.com', role: 'member' } })).status).toBe(403);
    expect((await mcpInitialize(tokens.access_token)).status).toBe(401);
  });

  describe('refusals', () => {
    let as: oauth.AuthorizationServer;
    let client: oauth.Client;
    let browser: DashboardClient;
    beforeAll(async () => {
      as = await discover(env);
      client = await register(env, as);
      browser = await DashboardClient.signedIn(env, org.id, member.userId);
    });

    const errorOf = (back: URL) => back.searchParams.get('error');

    it('plain PKCE: refused back to the app, no consent shown', async () => {
      const request = authorizationRequest(as, client, { scope: 'read', method: 'plain', challenge: 'a'.repeat(50) });
      const back = await follow(browser, env.config.publicBaseUrl, await visit(browser, request.url));
      expect(back.left).not.toBeNull();
      expect(errorOf(back.left!)).toBe('invalid_request');
      expect(back.left!.searchParams.get('error_description')).toMatch(/code_challenge_method/);
    });

    it('no PKCE at all: refused', async () => {
      const request = authorizationRequest(as, client, { scope: 'read' });
      request.url.searchParams.delete('code_challenge');
      request.url.searchParams.delete('code_challenge_method');
      const back = await follow(browser, env.config.publicBaseUrl, await visit(browser, request.url));
      expect(errorOf(back.left!)).toBe('invalid_request');
    });

    it('a redirect URI not registered exactly: an error page, never a redirect to it', async () => {
      for (const redirectUri of [`${REDIRECT_URI}/x`, 'http://127.0.0.1:8977/callback', 'https://evil.example/callback']) {
        const request = authorizationRequest(as, client, { scope: 'read', redirectUri });
        const res = await visit(browser, request.url);
        expect(res.status).toBe(400);
        expect(res.location).toBeUndefined();
        expect(res.text).toMatch(/redirect_uri/);
        expect(res.headers['x-frame-options']).toBe('DENY');
      }
    });

    it('registration refuses redirect URIs that are neither https nor http on a loopback address', async () => {
      for (const uri of ['http://example.com/callback', 'myapp://callback', 'http://192.168.1.10/cb']) {
        const res = await env.request('POST', '/oauth/register', { body: { client_name: 'Bad', redirect_uris: [uri], token_endpoint_auth_method: 'none' } });
        expect(res.status, uri).toBe(400);
        expect(res.body.error).toBe('invalid_redirect_uri');
      }
      const https = await env.request('POST', '/oauth/register', { body: { client_name: 'Good', redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'none' } });
      expect(https.status).toBe(201);
      expect(https.body.client_id).toMatch(/^app_/);
    });

    it('a resource other than /mcp or /v1: invalid_target', async () => {
      const request = authorizationRequest(as, client, { scope: 'read', resource: 'https://elsewhere.example/api' });
      const back = await follow(browser, env.config.publicBaseUrl, await visit(browser, request.url));
      expect(errorOf(back.left!)).toBe('invalid_target');
    });

    it('a code exchanged for another resource than it was granted for: refused', async () => {
      const request = authorizationRequest(as, client, { scope: 'read' });
      const back = await consent(env, browser, request);
      await expect(exchange(env, as, client, request, back, { resource: `${env.config.publicBaseUrl}/v1` })).rejects.toMatchObject({ error: 'invalid_target' });
    });

    it('a wrong code verifier: invalid_grant', async () => {
      const request = authorizationRequest(as, client, { scope: 'read' });
      const back = await consent(env, browser, request);
      await expect(exchange(env, as, client, request, back, { verifier: oauth.generateRandomCodeVerifier() })).rejects.toMatchObject({ error: 'invalid_grant' });
    });

    it('a code used twice: the second exchange fails and the tokens of the first end', async () => {
      const request = authorizationRequest(as, client, { scope: 'read' });
      const back = await consent(env, browser, request);
      const tokens = await exchange(env, as, client, request, back);
      expect((await mcpInitialize(tokens.access_token)).status).toBe(200);
      await expect(exchange(env, as, client, request, back)).rejects.toMatchObject({ error: 'invalid_grant' });
      expect((await mcpInitialize(tokens.access_token)).status).toBe(401);
    });

    it('an expired code: invalid_grant', async () => {
      const request = authorizationRequest(as, client, { scope: 'read' });
      const back = await consent(env, browser, request);
      // The code's lifetime (60 s) passes: its stored expiry is moved into the past.
      const code = back.searchParams.get('code')!;
      await env.container.database.db.updateTable('oauth_entries').set({ expires_at: Date.now() - 1000 }).where('id_hash', '=', sha256Hex(code)).execute();
      await expect(exchange(env, as, client, request, back)).rejects.toMatchObject({ error: 'invalid_grant' });
    });

    it('"Deny": access_denied back to the app, and no grant', async () => {
      const before = (await env.container.services.connectedApps.listAll({ type: 'cli', orgId: org.id, context: { source: 'cli', ip: null, userAgent: null, requestId: null } })).length;
      const request = authorizationRequest(as, client, { scope: 'read' });
      const back = await consent(env, browser, request, 'deny');
      expect(errorOf(back)).toBe('access_denied');
      expect(back.searchParams.get('state')).toBe(request.state);
      const after = (await env.container.services.connectedApps.listAll({ type: 'cli', orgId: org.id, context: { source: 'cli', ip: null, userAgent: null, requestId: null } })).length;
      expect(after).toBe(before);
    });

    it('"Members may connect apps" off: a member cannot allow, and their apps stop; an admin still can', async () => {
      const { tokens } = await connectApp(env, org.id, member.userId, { scope: 'read' });
      expect((await mcpInitialize(tokens.access_token)).status).toBe(200);
      const owner = { type: 'cli' as const, orgId: org.id, context: { source: 'cli' as const, ip: null, userAgent: null, requestId: null } };
      await env.container.services.connectedApps.setSettings(owner, { membersMayConnect: false });
      try {
        expect((await mcpInitialize(tokens.access_token)).status).toBe(401);
        const request = authorizationRequest(as, client, { scope: 'read' });
        const page = await follow(browser, env.config.publicBaseUrl, await visit(browser, request.url));
        expect(page.status).toBe(200);
        expect(page.text).toContain('only admins and owners connect apps');
        expect(page.text).not.toContain('value="allow"');
        const uid = /action="\/dashboard\/authorize\/([^"]+)"/.exec(page.text)![1];
        const forced = await browser.post(`/dashboard/authorize/${uid}`, { decision: 'allow' });
        expect(forced.status).toBe(403);
        const admin = await org.member('admin');
        const adminApp = await connectApp(env, org.id, admin.userId, { scope: 'read' });
        expect((await mcpInitialize(adminApp.tokens.access_token)).status).toBe(200);
      } finally {
        await env.container.services.connectedApps.setSettings(owner, { membersMayConnect: true });
      }
      expect((await mcpInitialize(tokens.access_token)).status).toBe(200);
    });
  });

  it('dynamic registration can be turned off (OAUTH_DYNAMIC_REGISTRATION=false)', async () => {
    const closed = await createTestEnv(dialect, { env: { OAUTH_DYNAMIC_REGISTRATION: 'false' } });
    try {
      const res = await closed.request('POST', '/oauth/register', { body: { client_name: 'X', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' } });
      expect(res.status).toBe(404);
      const meta = await closed.request('GET', '/.well-known/oauth-authorization-server');
      expect(meta.body.registration_endpoint).toBeUndefined();
    } finally {
      await closed.close();
    }
  });

  describe('a leaver loses their apps', () => {
    const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

    it('SCIM suspension revokes every connected app; reactivation does not bring them back', async () => {
      const leaver = await org.member('member');
      const { as, client, tokens } = await connectApp(env, org.id, leaver.userId, { scope: 'read' });
      expect((await mcpInitialize(tokens.access_token)).status).toBe(200);
      const scimToken = (await env.container.services.scimSettings.createToken(cliActorOf(org.id), `Okta ${Date.now()}`)).token;
      const scim = (active: boolean) =>
        env.request('PATCH', `/scim/v2/Users/${leaver.userId}`, {
          key: scimToken,
          headers: { 'content-type': 'application/scim+json' },
          payload: JSON.stringify({ schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: active }] }),
        });
      expect((await scim(false)).status).toBe(200);
      expect((await mcpInitialize(tokens.access_token)).status).toBe(401);
      await expect(refresh(env, as, client, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
      const suspended = (await env.request('GET', '/v1/audit-log?action=member.suspended&limit=1', { key: org.ownerKey })).body.data[0];
      expect(suspended.changes.revoked_apps).toEqual({ old: null, new: 1 });
      expect((await scim(true)).status).toBe(200);
      expect((await mcpInitialize(tokens.access_token)).status).toBe(401);
      expect(await env.container.services.connectedApps.listAll(cliActorOf(org.id))).not.toContainEqual(expect.objectContaining({ userId: leaver.userId }));
    });

    it('removing a member ends their apps', async () => {
      const leaver = await org.member('member');
      const { tokens } = await connectApp(env, org.id, leaver.userId, { scope: 'read' });
      expect((await mcpInitialize(tokens.access_token)).status).toBe(200);
      expect((await env.request('DELETE', `/v1/users/${leaver.userId}`, { key: org.ownerKey })).status).toBe(204);
      expect((await mcpInitialize(tokens.access_token)).status).toBe(401);
    });
  });

  it('an app token shares the rate limit of its grant, as a key has its own (429 with Retry-After)', async () => {
    const limited = await createTestEnv(dialect, { env: { RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      const lorg = await limited.createOrg('Limited');
      const { tokens } = await connectApp(limited, lorg.id, lorg.ownerId, { scope: 'read', resource: `${limited.config.publicBaseUrl}/v1` });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await limited.request('GET', '/v1/projects', { key: tokens.access_token })).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      // The owner's key has its own budget.
      expect((await limited.request('GET', '/v1/projects', { key: lorg.ownerKey })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
