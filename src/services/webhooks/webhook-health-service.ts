import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../../db/store.js';
import type { HealthDue } from '../../db/repositories/webhooks-repo.js';
import { durationInWords, HOUR_MS, toIso, type Clock } from '../../lib/time.js';
import type { Mailer } from '../../mail/mailer.js';
import { webhookDisabledMail, webhookFailingMail } from '../../mail/webhook-health-mail.js';
import { systemActor } from '../access/actor.js';
import { recordAudit } from '../audit/audit-record.js';

/** How long a streak lasts before owners and admins are told (CONTRACT 11). */
export const FAILING_MAIL_AFTER_MS = 24 * HOUR_MS;

export interface WebhookHealthDeps {
  store: Store;
  clock: Clock;
  mailer: Mailer;
  publicBaseUrl: string;
  log: FastifyBaseLogger;
  /** WEBHOOK_DISABLE_AFTER, for the 24-hour mail's wording; null when off. */
  disableAfterMs?: number | null;
}

export interface HealthSweep {
  disabled: number;
  warned: number;
  forgotten: number;
}

/**
 * What follows from a subscription's health, beside the delivery worker (which keeps the streak and
 * disables, in the transaction that records the attempt): for a disabling, its remaining waiting deliveries
 * cancelled with `subscription_disabled`, the `webhook.disabled` audit row (actor system) and the mail; for a
 * streak 24 hours old, the mail; and rotated-out secrets past their window forgotten. Each notice is claimed
 * in the database before it is sent, so it goes out at most once per streak, whichever process sweeps.
 */
export function createWebhookHealthService({ store, clock, mailer, publicBaseUrl, log, disableAfterMs = null }: WebhookHealthDeps) {
  async function recipients(orgId: string): Promise<{ emails: string[]; organizationName: string } | null> {
    const org = await store.repos.organizations.findById(orgId);
    if (!org) return null;
    const users = await store.repos.users.findActiveAdmins(orgId);
    return { emails: users.map((u) => u.email), organizationName: org.name };
  }

  async function mailAll(orgId: string, build: (to: string, organizationName: string) => Parameters<Mailer['send']>[0]): Promise<void> {
    const to = await recipients(orgId);
    if (!to) return;
    for (const email of to.emails) {
      try {
        await mailer.send(build(email, to.organizationName));
      } catch (err) {
        log.warn({ err: (err as Error).message, org_id: orgId }, 'webhook health: a notice could not be sent');
      }
    }
  }

  async function announceDisabled(row: HealthDue, now: number): Promise<boolean> {
    const claimed = await store.transaction(async (repos) => {
      if (!(await repos.webhooks.claimDisabledNotice(row.org_id, row.id, now))) return false;
      const cancelled = await repos.events.cancelPendingForWebhook(row.org_id, row.id, now, 'subscription_disabled');
      await recordAudit(repos, systemActor(row.org_id), {
        action: 'webhook.disabled',
        target: { type: 'webhook', id: row.id, label: row.url },
        changes: {
          status: { old: 'active', new: 'disabled' },
          reason: { old: null, new: row.disabled_reason },
          failing_since: { old: null, new: row.failing_since === null ? null : toIso(Number(row.failing_since)) },
          cancelled_deliveries: { old: null, new: cancelled },
        },
        at: row.disabled_at === null ? now : Number(row.disabled_at),
      });
      return true;
    });
    if (!claimed) return false;
    log.warn({ org_id: row.org_id, webhook_id: row.id, reason: row.disabled_reason }, 'webhook subscription disabled');
    const failingSince = new Date(Number(row.failing_since ?? now));
    await mailAll(row.org_id, (to, organizationName) =>
      webhookDisabledMail({
        to,
        organizationName,
        url: row.url,
        failingSince,
        subscriptionUrl: `${publicBaseUrl}/dashboard/webhooks/${row.id}`,
        reason: row.disabled_reason ?? 'failing',
        disabledAt: new Date(Number(row.disabled_at ?? now)),
      }),
    );
    return true;
  }

  async function warnFailing(row: HealthDue, now: number): Promise<boolean> {
    if (row.failing_since === null) return false;
    if (!(await store.repos.webhooks.claimFailingNotice(row.org_id, row.id, Number(row.failing_since), now))) return false;
    log.warn({ org_id: row.org_id, webhook_id: row.id, failing_since: toIso(Number(row.failing_since)) }, 'webhook subscription failing for 24 hours');
    await mailAll(row.org_id, (to, organizationName) =>
      webhookFailingMail(
        { to, organizationName, url: row.url, failingSince: new Date(Number(row.failing_since)), subscriptionUrl: `${publicBaseUrl}/dashboard/webhooks/${row.id}` },
        disableAfterMs === null ? null : durationInWords(disableAfterMs),
      ),
    );
    return true;
  }

  return {
    async sweep(): Promise<HealthSweep> {
      const now = clock.now();
      const result: HealthSweep = { disabled: 0, warned: 0, forgotten: 0 };
      for (const row of await store.repos.webhooks.healthDueAcrossOrgs(now - FAILING_MAIL_AFTER_MS)) {
        if (row.status === 'disabled') result.disabled += Number(await announceDisabled(row, now));
        else result.warned += Number(await warnFailing(row, now));
      }
      result.forgotten = await store.repos.webhooks.forgetExpiredPreviousSecretsAcrossOrgs(now);
      return result;
    },

    /** The next moment a sweep has work that only time brings (a 24-hour mark, a secret's expiry); null: none. */
    nextDueAt: () => store.repos.webhooks.nextHealthDueAcrossOrgs(FAILING_MAIL_AFTER_MS),
  };
}

export type WebhookHealthService = ReturnType<typeof createWebhookHealthService>;
