import { RESOURCE_KINDS, type ResourceKind } from '../../schemas/access.js';
import { formatScope, type Scope } from '../access/permissions.js';

/**
 * OAuth scopes are the key scopes of CONTRACT 9, written the way OAuth writes them: space-separated items,
 * `read`, `full`, `projects`, `projects:read`... (CONTRACT 17).
 */
export const OAUTH_SCOPES: readonly string[] = ['read', 'full', ...RESOURCE_KINDS.flatMap((kind) => [kind, `${kind}:read`])];

/**
 * The key scope a set of OAuth scopes grants: `full` wins; `read` reads everything, and items beside it widen
 * single kinds to writing; an empty request reads everything (least privilege; docs/decisions.md "Issue 45").
 * Unknown items were already dropped by the authorization server (they are not in the resource's list).
 */
export function scopeFromOauth(text: string): Scope {
  const items = new Set(text.split(' ').filter((item) => item !== ''));
  if (items.has('full')) return { kind: 'full' };
  const grants = new Map<ResourceKind, 'read' | 'full'>();
  if (items.has('read')) for (const kind of RESOURCE_KINDS) grants.set(kind, 'read');
  for (const item of items) {
    const [kind, access] = item.split(':') as [ResourceKind, string | undefined];
    if (!RESOURCE_KINDS.includes(kind)) continue;
    if (access === undefined) grants.set(kind, 'full');
    else if (!grants.has(kind)) grants.set(kind, 'read');
  }
  const readsAll = grants.size === RESOURCE_KINDS.length && [...grants.values()].every((level) => level === 'read');
  if (grants.size === 0 || readsAll) return { kind: 'read' };
  return { kind: 'resources', grants };
}

/** The scope back in OAuth's words, as the consent and the connected-apps tables show it. */
export function oauthScopeText(scope: Scope): string {
  return formatScope(scope).split(',').join(' ');
}

const KIND_WORDS: Record<ResourceKind, string> = {
  projects: 'projects and their collaborators',
  users: 'members',
  webhooks: 'webhook subscriptions and deliveries',
  workflows: 'workflows and runs',
  tasks: 'tasks',
  events: 'events',
  audit_log: 'the audit log',
  api_keys: 'API keys',
  exports: 'exports',
};

/** What the scope lets the app do, one line per grant, for the consent page (DASHBOARD 14). */
export function scopeInWords(scope: Scope): string[] {
  if (scope.kind === 'full') return ['Read and change everything you can, as you'];
  if (scope.kind === 'read') return ['Read everything you can read; change nothing'];
  return RESOURCE_KINDS.filter((kind) => scope.grants.has(kind)).map((kind) =>
    scope.grants.get(kind) === 'read' ? `Read ${KIND_WORDS[kind]}` : `Read and change ${KIND_WORDS[kind]}`,
  );
}
