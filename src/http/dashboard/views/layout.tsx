import type { ComponentChildren } from 'preact';
import type { Role } from '../../../db/schema.js';
import type { Workspace } from '../../../services/workspace.js';
import { CsrfField, ErrorSummary, Notice, type FormError } from './components.js';

/** What every signed-in page knows about who is looking. */
export interface Viewer {
  name: string | null;
  email: string;
  role: Role;
  organizationName: string;
  /** The organisation's lifecycle state as read with the session, for the read-only banner. */
  workspace: Workspace;
}

export interface NavItem {
  href: string;
  label: string;
  /** Roles that may open the page; absent: every member. */
  roles?: readonly Role[];
}

const ADMINS: readonly Role[] = ['owner', 'admin'];

/**
 * The navigation of DASHBOARD 1, in its order. A page appears here once it is built; the rest of the
 * section's links (My tasks, Export, Billing) arrive with their pages.
 */
export const NAV: readonly NavItem[] = [
  { href: '/dashboard/projects', label: 'Projects' },
  { href: '/dashboard/tasks', label: 'My tasks' },
  { href: '/dashboard/members', label: 'Members' },
  { href: '/dashboard/api-keys', label: 'API keys' },
  { href: '/dashboard/webhooks', label: 'Webhooks' },
  { href: '/dashboard/audit-log', label: 'Audit log', roles: ADMINS },
  { href: '/dashboard/export', label: 'Export', roles: ADMINS },
  { href: '/dashboard/billing', label: 'Billing' },
  { href: '/dashboard/account', label: 'Account' },
];

export interface LayoutProps {
  title: string;
  /** Signed-in pages show the navigation; sign-in pages do not. */
  viewer?: Viewer | null;
  csrf?: string;
  /** The nav entry to mark as current. */
  current?: string;
  errors?: readonly FormError[] | undefined;
  notice?: string | null | undefined;
  children?: ComponentChildren;
}

function Nav({ viewer, csrf, current }: { viewer: Viewer; csrf: string; current?: string | undefined }) {
  return (
    <nav aria-label="Main" class="main-nav">
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
    </nav>
  );
}

/**
 * DASHBOARD 10: every page of a cancelled workspace says so, with the (UTC) day its data is deleted. It
 * sits in the header landmark and is a status region, so it is found and announced without a search.
 */
export function ReadOnlyBanner({ workspace }: { workspace: Workspace }) {
  if (workspace.state === 'active') return null;
  if (workspace.deletionAt === null) {
    return (
      <p class="read-only-banner" role="status">
        This workspace is being deleted.
      </p>
    );
  }
  const iso = new Date(workspace.deletionAt).toISOString();
  return (
    <p class="read-only-banner" role="status">
      This workspace is read-only. It will be deleted on <time dateTime={iso}>{iso.slice(0, 10)}</time>.
    </p>
  );
}

/** Every dashboard page: landmarks, a skip link, the navigation, errors first. No inline script or style. */
export function Layout({ title, viewer, csrf, current, errors, notice, children }: LayoutProps) {
  const fullTitle = viewer ? `${title} · ${viewer.organizationName} · Workspace` : `${title} · Workspace`;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>{fullTitle}</title>
        <link rel="stylesheet" href="/dashboard/assets/dashboard.css" />
        <script src="/dashboard/assets/dashboard.js" defer></script>
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
          {viewer ? <ReadOnlyBanner workspace={viewer.workspace} /> : null}
        </header>
        {viewer && csrf ? <Nav viewer={viewer} csrf={csrf} current={current} /> : null}
        <main id="main" tabindex={-1}>
          <h1>{title}</h1>
          <ErrorSummary errors={errors} />
          <Notice>{notice}</Notice>
          {children}
        </main>
      </body>
    </html>
  );
}
