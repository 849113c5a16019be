import { newId } from '../lib/ids.js';
import { toIso } from '../lib/time.js';
import type { Repositories } from '../db/repositories/index.js';

export const EVENT_TYPES = [
  'project.created',
  'project.updated',
  'project.deleted',
  'workflow.completed',
  'workflow.failed',
  'task.assigned',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export interface RecordedEvent {
  id: string;
  deliveries: number;
}

/** What a service needs to wake delivery workers after a commit (the container's `waker` signal). */
export interface DeliveryWaker {
  wake(): void;
}

/**
 * Transactional outbox: called inside the service's transaction, so the event, its final body bytes and
 * one pending delivery per subscription listening at that moment commit (or roll back) with the change.
 */
export async function recordEvent(
  repos: Repositories,
  input: { orgId: string; type: EventType; data: Record<string, unknown>; occurredAt: number },
): Promise<RecordedEvent> {
  const id = newId('evt');
  const body = JSON.stringify({ event: input.type, timestamp: toIso(input.occurredAt), data: input.data });
  await repos.events.insertEvent({ id, org_id: input.orgId, type: input.type, body, occurred_at: input.occurredAt });
  const subscriptions = await repos.webhooks.listAll(input.orgId);
  const listening = subscriptions.filter((s) => (JSON.parse(s.events) as string[]).includes(input.type));
  await repos.events.insertDeliveries(
    listening.map((s) => ({
      id: newId('dlv'),
      org_id: input.orgId,
      event_id: id,
      webhook_id: s.id,
      event_type: input.type,
      status: 'pending' as const,
      attempt_count: 0,
      failure_count: 0,
      next_attempt_at: input.occurredAt,
      lease_owner: null,
      lease_expires_at: null,
      last_status_code: null,
      last_error: null,
      created_at: input.occurredAt,
      updated_at: input.occurredAt,
    })),
  );
  return { id, deliveries: listening.length };
}
