import type { FastifyBaseLogger } from 'fastify';
import type { UserRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import type { Clock } from '../../lib/time.js';
import type { Mailer, MailMessage } from '../../mail/mailer.js';
import { sendSecurityMail } from '../../mail/security-mail.js';
import { ssoLinkedOwnersMail, ssoLinkedUserMail, ssoSettingsChangedMail, type LinkedIdentity } from '../../mail/sso-mail.js';
import type { Actor } from '../access/actor.js';

/** A link made inside a unit of work, mailed after it commits. */
export interface PendingLink {
  user: UserRow;
  link: LinkedIdentity;
}

/** Who made a change, as the owners' mail names them. */
function actorWords(actor: Actor): string {
  return actor.type === 'user' ? actor.label : actor.type === 'cli' ? 'An operator (command line)' : 'The service';
}

export interface SsoNoticesDeps {
  store: Store;
  clock: Clock;
  mailer: Mailer;
  publicBaseUrl: string;
  log: Pick<FastifyBaseLogger, 'error'>;
}

/**
 * Every change to who can sign in, and every new link, is mailed to every owner, and a link to the member too
 * (DASHBOARD 12, "Who may change sign-in"): whoever made it, owners hear of it. Sent after the change committed; a
 * mail server that fails is logged, never the person's problem.
 */
export function createSsoNotices({ store, clock, mailer, publicBaseUrl, log }: SsoNoticesDeps) {
  const send = (mail: MailMessage, userId: string) => void sendSecurityMail(mailer, log, mail, userId);
  const organizationName = async (orgId: string) => (await store.repos.organizations.findById(orgId))?.name ?? 'Workspace';

  return {
    async changed(actor: Actor, changes: readonly string[]): Promise<void> {
      if (changes.length === 0) return;
      const name = await organizationName(actor.orgId);
      const at = new Date(clock.now());
      for (const owner of await store.repos.users.findActiveOwners(actor.orgId)) {
        send(ssoSettingsChangedMail({ to: owner.email, organizationName: name, at }, actorWords(actor), changes, `${publicBaseUrl}/dashboard/settings/sso`), owner.id);
      }
    },

    async linked(pending: PendingLink | null): Promise<void> {
      if (!pending) return;
      const { user, link } = pending;
      const name = await organizationName(user.org_id);
      const input = (to: string) => ({ to, organizationName: name, at: new Date(clock.now()) });
      for (const owner of await store.repos.users.findActiveOwners(user.org_id)) {
        if (owner.id !== user.id) send(ssoLinkedOwnersMail(input(owner.email), link, `${publicBaseUrl}/dashboard/audit-log`), owner.id);
      }
      send(ssoLinkedUserMail(input(user.email), link, `${publicBaseUrl}/dashboard/account/security`), user.id);
    },
  };
}

export type SsoNotices = ReturnType<typeof createSsoNotices>;
