import type { ComponentChildren } from 'preact';
import type { Role } from '../../db/schema.js';
import type { Workspace } from '../../services/access/workspace.js';
import type { Flash, TypedField } from '../flash.js';
import type { Progress } from '../progress.js';
import { CsrfField, Day, ErrorSummary, Notice, type FormError } from './components.js';

/** What every signed-in page knows about who is looking. */
export interface Viewer {
  userId: string;
  name: string | null;
  email: string;
  role: Role;
  organizationName: string;
  /** The organisation's lifecycle state as read with the session, for the read-only banner. */
  workspace: Workspace;
  /** What the session's one-time slot held for this page view: shown once by the layout. */
  flash?: Flash | null;
  /** The organisation requires two-step verification and this member has none yet: set it up by then. */
  twoStepDeadline?: number | null;
}

export interface NavItem {
  href: string;
  label: string;
  /** Roles that may open the page; absent: every member. */
  roles?: readonly Role[];
}

const ADMINS: readonly Role[] = ['owner', 'admin'];

/** The organisation's settings page; its sub-pages mark it current in the navigation. */
export const SETTINGS = '/dashboard/settings';

/** The navigation of DASHBOARD 1, in its order, after the overview the brand also links to. */
export const NAV: readonly NavItem[] = [
  { href: '/dashboard', label: 'Overview' },
  { href: '/dashboard/projects', label: 'Projects' },
  { href: '/dashboard/tasks', label: 'My tasks' },
  { href: '/dashboard/members', label: 'Members' },
  { href: '/dashboard/api-keys', label: 'API keys' },
  { href: '/dashboard/webhooks', label: 'Webhooks' },
  { href: '/dashboard/audit-log', label: 'Audit log', roles: ADMINS },
  { href: '/dashboard/export', label: 'Export', roles: ADMINS },
  { href: '/dashboard/billing', label: 'Billing' },
  { href: SETTINGS, label: 'Settings', roles: ADMINS },
  { href: '/dashboard/account', label: 'Account' },
  { href: '/dashboard/account/security', label: 'Security' },
];

/** The scripts of a page with a passkey ceremony: the library's bundle, then ours. */
export const PASSKEY_SCRIPTS = ['webauthn.js', 'passkeys.js'] as const;

export interface LayoutProps {
  title: string;
  /** The page's heading where it needs more than the title's text (a host that may wrap before its dots). */
  heading?: ComponentChildren;
  /** Signed-in pages show the navigation; sign-in pages do not. */
  viewer?: Viewer | null;
  csrf?: string;
  /** The nav entry to mark as current. */
  current?: string;
  errors?: readonly FormError[] | undefined;
  notice?: string | null | undefined;
  /** Work in progress the page follows: polled by the script, refreshed without it. */
  progress?: Progress | null | undefined;
  /** Page scripts beyond the common one, from /dashboard/assets/ (passkey ceremonies). */
  scripts?: readonly string[] | undefined;
  /**
   * Another site to go to at once (the identity provider): a meta refresh, because CSP's `form-action 'self'`
   * stops a form's redirect to another origin, while a page's own navigation is not a form's.
   */
  redirectTo?: string | undefined;
  children?: ComponentChildren;
}

function Nav({ viewer, csrf, current }: { viewer: Viewer; csrf: string; current?: string | undefined }) {
  // On a phone the links fold behind "Menu" (DASHBOARD 1): a native disclosure, so no script is needed. On a
  // wide screen the stylesheet hides the summary and shows the contents whether the disclosure is open or not.
  const currentLabel = NAV.find((item) => item.href === current)?.label;
  return (
    <nav aria-label="Main" class="main-nav">
      <details class="nav-menu">
        {/* Which section this is, beside "Menu", as GitHub and Vercel show it on a phone (review 5, G8). */}
        <summary>
          Menu{currentLabel ? <span class="nav-current"> · {currentLabel}</span> : null}
        </summary>
        <div class="nav-body">
          <ul>
            {NAV.filter((item) => !item.roles || item.roles.includes(viewer.role)).map((item) => (
              <li>
                <a href={item.href} aria-current={item.href === current ? 'page' : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
          <form method="post" action="/dashboard/logout" class="sign-out">
            <CsrfField token={csrf} />
            <button type="submit" class="link-button">
              Sign out
            </button>
          </form>
        </div>
      </details>
    </nav>
  );
}

/**
 * DASHBOARD 10: every page of a cancelled workspace says so, with the (UTC) day its data is deleted. It
 * sits in the header landmark and is a status region, so it is found and announced without a search.
 */
export function ReadOnlyBanner({ workspace, role }: { workspace: Workspace; role: Role }) {
  if (workspace.state === 'active') return null;
  if (workspace.deletionAt === null) {
    return (
      <p class="read-only-banner" role="status">
        This workspace is being deleted.
      </p>
    );
  }
  return (
    <p class="read-only-banner" role="status">
      This workspace is read-only. It will be deleted on <Day iso={new Date(workspace.deletionAt).toISOString()} />.{' '}
      {role === 'owner' ? (
        <a href="/dashboard/billing">Resume subscription</a>
      ) : (
        <>
          An owner can resume it on the <a href="/dashboard/billing">Billing</a> page.
        </>
      )}
    </p>
  );
}

/** DASHBOARD 11: the organisation's requirement, during the member's 7 days of grace. */
function TwoStepBanner({ deadline }: { deadline: number }) {
  return (
    <p class="read-only-banner" role="status">
      Your organisation requires two-step verification. <a href="/dashboard/account/security">Set up two-step verification by <Day iso={new Date(deadline).toISOString()} /></a>.
    </p>
  );
}

/**
 * DASHBOARD 1: a refused form's text comes back with the refusal, so nothing typed is lost, even where the
 * form itself is no longer offered (a workspace that became read-only in another tab). Read-only fields: to copy.
 */
function TypedPanel({ fields }: { fields: readonly TypedField[] }) {
  return (
    <section class="panel typed-panel" aria-labelledby="typed-title">
      <h2 id="typed-title">What you typed (not saved)</h2>
      {fields.map((field, i) => (
        <div class="field">
          <label for={`typed-${i}`}>{field.label}</label>
          <textarea id={`typed-${i}`} readOnly rows={field.value.length > 80 ? 4 : 1}>
            {field.value}
          </textarea>
        </div>
      ))}
    </section>
  );
}

/** Every dashboard page: landmarks, a skip link, the navigation, errors first. No inline script or style. */
export function Layout({ title, heading, viewer, csrf, current, errors, notice, progress, scripts, redirectTo, children }: LayoutProps) {
  const fullTitle = viewer ? `${title} · ${viewer.organizationName} · Workspace` : `${title} · Workspace`;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>{fullTitle}</title>
        <link rel="icon" href="/dashboard/assets/favicon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="/dashboard/assets/dashboard.css" />
        <script src="/dashboard/assets/dashboard.js" defer></script>
        {scripts?.map((name) => <script src={`/dashboard/assets/${name}`} defer></script>)}
        {redirectTo ? <meta http-equiv="refresh" content={`0;url=${redirectTo}`} /> : null}
        {progress ? (
          <noscript>
            <meta http-equiv="refresh" content="15" />
          </noscript>
        ) : null}
      </head>
      <body class={viewer ? 'app' : 'auth'}>
        <a class="skip-link" href="#main">
          Skip to main content
        </a>
        <header class="site-header">
          <a href="/dashboard" class="brand">
            Workspace
          </a>
          {viewer ? (
            <p class="who">
              <span>{viewer.name ?? viewer.email}</span> <span class="muted">· {viewer.organizationName} · {viewer.role}</span>
            </p>
          ) : null}
          {viewer ? <ReadOnlyBanner workspace={viewer.workspace} role={viewer.role} /> : null}
          {viewer?.twoStepDeadline ? <TwoStepBanner deadline={viewer.twoStepDeadline} /> : null}
        </header>
        {viewer && csrf ? <Nav viewer={viewer} csrf={csrf} current={current} /> : null}
        <main id="main" tabindex={-1}>
          <h1>{heading ?? title}</h1>
          <ErrorSummary errors={viewer?.flash?.problem ? [{ field: null, message: viewer.flash.problem }, ...(errors ?? [])] : errors} />
          {viewer?.flash?.typed?.length ? <TypedPanel fields={viewer.flash.typed} /> : null}
          <Notice>{viewer?.flash?.notice}</Notice>
          <Notice>{notice}</Notice>
          {progress ? (
            <p class="progress-note" data-progress-url={progress.url} data-progress-version={progress.version}>
              <span class="progress-live">This page updates by itself while the work goes on.</span>
            </p>
          ) : null}
          {children}
        </main>
      </body>
    </html>
  );
}
