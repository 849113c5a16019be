import path from 'node:path';
import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { h } from 'preact';
import { isDatabaseUnavailable } from '../db/availability.js';
import { DomainError } from '../errors.js';
import type { AppDeps } from '../http/app-deps.js';
import { sentence } from '../lib/text.js';
import { formatDay } from '../lib/time.js';
import { requestContext } from '../http/request-context.js';
import { dashboardCookies } from './cookies.js';
import { isReadOnlyRefusal, pageContext, safeDashboardPath, seeOther, sendPage } from './context.js';
import { asFlash, typedFields } from './flash.js';
import { csrfMatches, isCrossSite } from './csrf.js';
import { schemaRefusalMessage } from './form-validation.js';
import { dashboardPages } from './pages/index.js';
import { ErrorPage, ReadOnlyPage } from './views/error-page.js';
import { confirmIdentity, isConfirmationRefusal, readWebauthnBundle, sendConfirmPage } from './confirm-identity.js';

const ASSETS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../public/dashboard');

/**
 * DASHBOARD 1: nothing runs that we did not serve, nothing inline, no framing, and no caching of pages
 * that may show a secret (every dashboard page is personal, so none is cached).
 */
const SECURITY_HEADERS = {
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const ASSET_PREFIX = '/dashboard/assets/';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export class CsrfError extends DomainError {
  constructor() {
    super(403, 'csrf_failed', 'This form has expired or was sent from another site. Go back, reload the page and try again.');
  }
}

/**
 * The web dashboard under /dashboard: server-rendered pages over the same services as the API. Form bodies
 * are accepted only in this scope (the API keeps answering 415 to them), errors are HTML pages here while
 * /v1 keeps its JSON errors, and every unsafe request must carry the form's CSRF token from our own origin.
 */
export const dashboardPlugin: FastifyPluginAsyncTypebox<AppDeps & { prefix?: string }> = async (app, options) => {
  // The scope's own prefix must not reach the page plugins, or they would be mounted under it twice.
  const { prefix: _prefix, ...deps } = options;
  const { services, config } = deps;
  const cookies = dashboardCookies(config);
  const ownOrigins = [new URL(config.publicBaseUrl).origin];

  // Cookies and form bodies exist only in this scope: the API parses neither, and pays nothing for them.
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: 1024 * 1024 });
  await app.register(fastifyStatic, {
    root: ASSETS,
    prefix: '/assets/',
    decorateReply: false,
    index: false,
    list: false,
    cacheControl: true,
    maxAge: '1h',
  });

  app.decorateRequest('dashboard', null as never);

  app.addHook('onRequest', async (request, reply) => {
    reply.headers(SECURITY_HEADERS);
    // The stylesheet and script are public and the same for everyone: no session lookup for them.
    if (request.url.startsWith(ASSET_PREFIX)) {
      request.dashboard = { session: null, pending: null, csrfSecret: null, flash: null, keepFlash: null };
      return;
    }
    const token = request.cookies[cookies.session];
    const resolved = token ? await services.sessions.resolve(token, requestContext(request, 'dashboard')) : null;
    if (token && !resolved) cookies.clearSession(reply);
    // A sign-in owing its second factor is not signed in: it opens the two-step page and nothing else.
    const session = resolved?.stage === 'active' ? resolved : null;
    const pending = resolved?.stage === 'two_step' ? resolved : null;
    request.dashboard = {
      session,
      pending,
      csrfSecret: resolved ? token! : (request.cookies[cookies.csrf] ?? null),
      flash: null,
      keepFlash: session ? (flash) => services.sessions.putFlash(session, token!, flash) : null,
    };
    // The one-time slot is emptied by the page shown next, not by a form's post nor a progress fragment.
    if (session?.sealedFlash && request.method === 'GET' && !request.routeOptions.config.dashboardFragment) {
      request.dashboard.flash = asFlash(await services.sessions.takeFlash(session, token!));
    }
    const config = request.routeOptions.config;
    if (session) {
      // The organisation's requirement, decided by the sessions service for every sign-in path alike.
      if (session.twoStep.mustEnroll && !config.dashboardEnrollment && !config.dashboardPublic) {
        return reply.code(303).header('location', '/dashboard/account/security?required=1').send();
      }
      return;
    }
    if (config.dashboardPublic) return;
    if (pending) return reply.code(303).header('location', '/dashboard/login/two-step').send();
    // Not signed in: to the sign-in page, and back here afterwards (only a page a GET can show again).
    const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
    return reply.code(303).header('location', `/dashboard/login${next}`).send();
  });

  // After the body is parsed, before it is validated: a forged form is refused whatever it holds.
  app.addHook('preValidation', async (request) => {
    if (!UNSAFE.has(request.method)) return;
    if (isCrossSite(request, ownOrigins)) throw new CsrfError();
    const secret = request.dashboard.csrfSecret;
    const given = (request.body as Record<string, unknown> | undefined)?._csrf;
    if (!secret || !csrfMatches(secret, given)) throw new CsrfError();
    // "Confirm it's you" posts the original form again with the proof beside it: checked, then taken out,
    // so the original route sees its own fields and goes on (DASHBOARD 11).
    await confirmIdentity(services, request);
  });

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    // A sensitive action without a recent confirmation: the page asks, and posts the same form again.
    if (isConfirmationRefusal(error) && request.dashboard?.session) return sendConfirmPage(services, request, reply, error);
    // A refused form goes back to the page it was on, the reason shown there once: a reload shows that page
    // and never posts again. A post without its page (a forged one, a script) gets the error page.
    const from = refusedFormOrigin(error, request);
    if (from) {
      const typed = typedFields(request.body);
      const problem = isReadOnlyRefusal(error) ? readOnlySentence(request) : sentence(refusalMessage(error));
      return seeOther(reply, from, { problem, ...(typed.length > 0 ? { typed } : {}) });
    }
    return renderError(error, request, reply);
  });
  app.setNotFoundHandler((request, reply) =>
    renderError(new DomainError(404, 'not_found', 'There is no page at this address.'), request, reply),
  );

  // The passkey library's browser bundle, served by us (CSP `script-src 'self'`), read once.
  const webauthnBundle = await readWebauthnBundle();
  app.get('/assets/webauthn.js', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(webauthnBundle),
  );

  for (const page of dashboardPages) await app.register(page, deps);
};

/** The page a refused signed-in form came from (its `_from` field), when the refusal is the client's. */
function refusedFormOrigin(error: FastifyError | DomainError, request: FastifyRequest): string | null {
  if (request.method !== 'POST' || !request.dashboard?.keepFlash) return null;
  if (error instanceof CsrfError || (error instanceof DomainError && error.status === 429)) return null;
  if (!(error instanceof DomainError && error.status < 500) && !(error as FastifyError).validation) return null;
  return safeDashboardPath((request.body as Record<string, unknown> | undefined)?._from);
}

/** The read-only refusal in the page's words: the deletion day, not the API's timestamp. */
function readOnlySentence(request: FastifyRequest): string {
  const deletionAt = request.dashboard?.session ? pageContext(request).viewer.workspace.deletionAt : null;
  return deletionAt
    ? `This workspace is read-only since its subscription was cancelled, so nothing was changed. It will be deleted on ${formatDay(deletionAt)}.`
    : 'This workspace is read-only, so nothing was changed.';
}

function refusalMessage(error: FastifyError | DomainError): string {
  return error instanceof DomainError ? error.message : schemaRefusalMessage(error as FastifyError & { validationContext?: string });
}

/** "project not found" (the API's words) as a person reads it on a page. */
function notFoundSentence(message: string): string {
  const what = /^(.+) not found$/.exec(message)?.[1];
  return what ? `There is no ${what} at this address. It may have been deleted, or the link may be incomplete.` : sentence(message);
}

function renderError(error: FastifyError | DomainError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  let status: number;
  let message: string;
  if (error instanceof DomainError) {
    status = error.status;
    message = error.status === 404 ? notFoundSentence(error.message) : sentence(error.message);
    if (error.headers) reply.headers(error.headers);
  } else if ((error as FastifyError).validation) {
    status = 400;
    message = sentence(schemaRefusalMessage(error as FastifyError & { validationContext?: string }));
  } else if (isDatabaseUnavailable(error)) {
    status = 503;
    message = 'The service is temporarily unavailable. Try again in a moment.';
  } else if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    status = error.statusCode;
    message = 'The request could not be processed.';
  } else {
    status = 500;
    message = 'An internal error occurred. It has been logged; try again later.';
  }
  if (status >= 500) request.log.error({ err: error }, 'dashboard request failed');
  const signedIn = request.dashboard?.session ? pageContext(request) : null;
  if (isReadOnlyRefusal(error)) return sendPage(reply, h(ReadOnlyPage, { message, viewer: signedIn?.viewer ?? null, csrf: signedIn?.csrf }), status);
  return sendPage(reply, h(ErrorPage, { status, message, viewer: signedIn?.viewer ?? null, csrf: signedIn?.csrf }), status);
}
