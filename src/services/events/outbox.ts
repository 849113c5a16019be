import { newId } from '../../lib/ids.js';
import { toIso } from '../../lib/time.js';
import type { EventType } from '../../schemas/events.js';
import type { Repositories } from '../../db/repositories/index.js';

export interface RecordedEvent {
  id: string;
  deliveries: number;
}

/** What a service needs to wake delivery workers after a commit (the container's `waker` signal). */
export interface DeliveryWaker {
  wake(): void;
}

const newDeliveryId = () => newId('dlv');

/**
 * Transactional outbox: called inside the service's transaction, so the event, its final body bytes and
 * one pending delivery per subscription listening at that moment commit (or roll back) with the change.
 * The repository writes all of it in as few statements as the dialect allows (one on PostgreSQL).
 */
export async function recordEvent(
  repos: Repositories,
  input: { orgId: string; type: EventType; data: Record<string, unknown>; occurredAt: number },
): Promise<RecordedEvent> {
  const id = newId('evt');
  const body = JSON.stringify({ event: input.type, timestamp: toIso(input.occurredAt), data: input.data });
  // The project it is about decides who reads it back (GET /v1/events, CONTRACT 15).
  const projectId = typeof input.data.project_id === 'string' ? input.data.project_id : null;
  const deliveries = await repos.events.insertEvent({ id, org_id: input.orgId, type: input.type, body, occurred_at: input.occurredAt, project_id: projectId }, newDeliveryId);
  return { id, deliveries };
}
