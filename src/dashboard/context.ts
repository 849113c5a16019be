import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JSX } from 'preact';
import { DomainError, errors } from '../errors.js';
import { randomToken } from '../lib/ids.js';
import { authorize, type UserActor } from '../services/access/actor.js';
import type { Action } from '../services/access/permissions.js';
import type { ResourceKind } from '../schemas/access.js';
import { isWritable, workspaceReadOnlyError } from '../services/access/workspace.js';
import type { ResolvedSession } from '../services/identity/sessions-service.js';
import type { DashboardCookies } from './cookies.js';
import { csrfToken } from './csrf.js';
import type { Flash } from './flash.js';
import { renderPage } from './render.js';
import type { Viewer } from './views/layout.js';
import { hasControlCharacter } from '../lib/text.js';
import { CONFIRMATION_REQUIRED } from '../services/identity/confirmation.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A dashboard page open without a session (sign-in, password links, invitations). */
    dashboardPublic?: boolean;
    /** A JSON fragment a page polls for progress: it never empties the session's one-time slot. */
    dashboardFragment?: boolean;
    /**
     * Open to a member who must set up two-step verification first (DASHBOARD 11): the security page and
     * what it posts to, and signing out. Every other page sends them there.
     */
    dashboardEnrollment?: boolean;
  }
  interface FastifyRequest {
    /** Set for every /dashboard request by the dashboard's onRequest hook. */
    dashboard: DashboardState;
  }
}

export interface DashboardState {
  session: ResolvedSession | null;
  /** A sign-in that still owes its second factor: it opens only the two-step page (and the public ones). */
  pending: ResolvedSession | null;
  /** The secret this browser's CSRF tokens derive from: the session token, or the pre-session cookie. */
  csrfSecret: string | null;
  /** What the session's one-time slot held for this page (taken when a page is shown, never for a fragment). */
  flash: Flash | null;
  /** Fills the session's one-time slot for the next page. */
  keepFlash: ((flash: Flash) => Promise<void>) | null;
}

/** The signed-in person on a page: who they are to services, to the layout, and their forms' token. */
export interface PageContext {
  actor: UserActor;
  session: ResolvedSession;
  viewer: Viewer;
  csrf: string;
}

export function pageContext(request: FastifyRequest): PageContext {
  const { session, csrfSecret, flash } = request.dashboard;
  // The onRequest hook redirects before any handler of a non-public page runs without a session.
  if (!session || !csrfSecret) throw new DomainError(401, 'unauthorized', 'sign in to continue');
  return {
    actor: session.actor,
    session,
    viewer: {
      userId: session.user.id,
      name: session.user.name,
      email: session.user.email,
      role: session.user.role,
      organizationName: session.organizationName,
      workspace: session.actor.workspace,
      flash,
      twoStepDeadline: session.twoStep.deadline,
    },
    csrf: csrfToken(csrfSecret),
  };
}

/** The CSRF token for a page shown before sign-in; makes the pre-session secret when the browser has none. */
export function publicCsrf(request: FastifyRequest, reply: FastifyReply, cookies: DashboardCookies): string {
  let secret = request.dashboard.csrfSecret;
  if (!secret) {
    secret = randomToken(32);
    cookies.setCsrf(reply, secret);
    request.dashboard.csrfSecret = secret;
  }
  return csrfToken(secret);
}

export function sendPage(reply: FastifyReply, page: JSX.Element, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(renderPage(page, formOriginOf(reply.request, status)));
}

/** The page this page's forms are on (`_from`, where a refusal returns), or null when there is none to name. */
function formOriginOf(request: FastifyRequest, status: number): string | null {
  // A page open without a session has no session to carry a refusal; its address may even hold a link's token.
  if (request.routeOptions.config?.dashboardPublic || !request.dashboard?.session) return null;
  // A form re-shown after a refusal keeps the page it first came from.
  if (request.method !== 'GET') return safeDashboardPath((request.body as Record<string, unknown> | undefined)?._from);
  // An error page of a GET names no page to come back to: its address is the problem.
  return status < 400 ? request.url : null;
}

/**
 * After a form: 303 to a page (never to another origin), with what the page shows once (what changed, or a
 * secret) in the session's one-time slot: a reload shows the page, never the action or the notice again.
 */
export async function seeOther(reply: FastifyReply, location: string, flash?: Flash): Promise<FastifyReply> {
  const keep = reply.request.dashboard?.keepFlash;
  if (flash && keep) await keep(flash);
  return reply.code(303).header('location', safeDashboardPath(location) ?? '/dashboard').send();
}

/** `?next=` and redirects accept only a path inside the dashboard: no scheme, no host, no `//`, no backslash. */
export function safeDashboardPath(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2048) return null;
  if (!/^\/dashboard(?:[/?#]|$)/.test(value) || value.includes('\\') || value.startsWith('//')) return null;
  if (hasControlCharacter(value)) return null;
  // A dot segment lets the browser climb out of /dashboard: `/dashboard/..//evil.example` resolves to
  // `//evil.example`, another site. Refused however it is spelt (`.`, `..`, `%2e`, `%2E%2e`).
  const pathPart = value.split(/[?#]/, 1)[0]!;
  if (pathPart.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment))) return null;
  return value;
}

/**
 * A path id as our ids are spelt (`prefix_` + base-36); anything else (a NUL, say) names nothing and is a
 * 404 page before it reaches the database.
 */
export function pathId(id: string, what: string): string {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(id)) throw errors.notFound(what);
  return id;
}

/**
 * The error a form shows on its own page: a refusal (4xx), optionally only of the given statuses, with its
 * headers (Retry-After) set on the reply. Anything else (a fault, or a status the page does not handle)
 * is thrown on to the dashboard's error page, and so is `workspace_read_only` from every form: one page
 * says what a read-only workspace still allows (views/error-page.tsx).
 */
export function pageRefusal(reply: FastifyReply, error: unknown, statuses?: readonly number[]): DomainError {
  if (!(error instanceof DomainError) || error.status >= 500 || (statuses && !statuses.includes(error.status))) throw error;
  if (isReadOnlyRefusal(error)) throw error;
  // "Confirm it's you" is its own page, whichever form asked (confirm-identity.tsx).
  if (error.code === CONFIRMATION_REQUIRED) throw error;
  if (error.headers) reply.headers(error.headers);
  return error;
}

export const isReadOnlyRefusal = (error: unknown): boolean => error instanceof DomainError && error.code === 'workspace_read_only';

/**
 * For a page that checks a form (or shows a change's confirmation step) before calling the service: the
 * role's 403, then the read-only 403, ahead of the form's own 400, in the API's order (CONTRACT 1). The
 * services apply the same rules again; this only asks them early, as the API's auth hook does.
 */
export function authorizeChange(actor: UserActor, resource: ResourceKind, action: Action): void {
  authorize(actor, resource, action);
  if (!isWritable(actor)) throw workspaceReadOnlyError(actor.workspace);
}
