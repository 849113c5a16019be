import type { Repositories } from '../../db/repositories/index.js';
import { DomainError, errors } from '../../errors.js';
import { actingRole, type Actor } from '../access/actor.js';

/* Who may see and change single sign-on (DASHBOARD 12, "Who may change sign-in"), for its settings and round trips. */

export const notConfigured = () => new DomainError(409, 'sso_not_configured', 'Save a single sign-on connection first.');

/** The dashboard's admins see the settings; API keys never reach them (a confirmed session's business). */
export function requireAdminView(actor: Actor): void {
  const role = actingRole(actor);
  if (role !== 'admin' && role !== 'owner') throw errors.forbidden('only an admin or owner sees single sign-on');
  if (actor.type === 'user' && actor.keyId !== null) throw errors.forbidden('single sign-on is configured from the dashboard or the CLI');
}

/** Owners (and the operator's CLI) change who can sign in: the connection, the domains, the requirement, the test. */
export function requireOwner(actor: Actor): void {
  if (actingRole(actor) !== 'owner') throw errors.forbidden('only an owner changes single sign-on');
  if (actor.type === 'user' && actor.keyId !== null) throw errors.forbidden('single sign-on is configured from the dashboard or the CLI');
}

/** The organisation a setting or a round trip belongs to (404 when it is gone). */
export async function organizationOf(repos: Repositories, orgId: string) {
  const org = await repos.organizations.findById(orgId);
  if (!org) throw errors.notFound('organization');
  return org;
}
