import { describe, expect, it } from 'vitest';
import { formatScope } from '../../src/services/access/permissions.js';
import { oauthScopeText, scopeFromOauth, scopeInWords } from '../../src/services/apps/app-scopes.js';

/** OAuth scopes are the key scopes of CONTRACT 9, space-separated (CONTRACT 17): each form and what it grants. */
describe('app scopes', () => {
  const key = (text: string) => formatScope(scopeFromOauth(text));

  it('reads the forms OAuth writes, as the key scope they grant', () => {
    expect(key('full')).toBe('full');
    expect(key('read')).toBe('read');
    expect(key('projects:read users:read')).toBe('projects:read,users:read');
    expect(key('projects tasks:read')).toBe('projects,tasks:read');
    // `full` wins over anything beside it; an empty request reads.
    expect(key('read full projects')).toBe('full');
    expect(key('')).toBe('read');
    // `read` beside kinds: everything read, those kinds written.
    expect(key('read tasks')).toBe('projects:read,users:read,webhooks:read,workflows:read,tasks,events:read,audit_log:read,api_keys:read,exports:read');
    // Every kind read is `read`.
    expect(key('projects:read users:read webhooks:read workflows:read tasks:read events:read audit_log:read api_keys:read exports:read')).toBe('read');
    // A kind and its read form: the wider one.
    expect(key('tasks:read tasks')).toBe('tasks');
    expect(key('tasks tasks:read')).toBe('tasks');
    // Unknown items are ignored (the server drops them before they get here).
    expect(key('projects unknown other:read')).toBe('projects');
  });

  it('writes scopes back as OAuth does, and in words for the consent page', () => {
    expect(oauthScopeText(scopeFromOauth('projects tasks:read'))).toBe('projects tasks:read');
    expect(scopeInWords(scopeFromOauth('full'))).toEqual(['Read and change everything you can, as you']);
    expect(scopeInWords(scopeFromOauth('read'))).toEqual(['Read everything you can read; change nothing']);
    expect(scopeInWords(scopeFromOauth('webhooks audit_log:read'))).toEqual(['Read and change webhook subscriptions and deliveries', 'Read the audit log']);
  });
});
