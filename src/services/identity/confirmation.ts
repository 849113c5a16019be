import { DomainError } from '../../errors.js';
import type { Actor } from '../access/actor.js';

/** "Confirm it's you" lasts this long on a session (DASHBOARD 11). */
export const CONFIRM_WINDOW_MS = 15 * 60 * 1000;

export const CONFIRMATION_REQUIRED = 'confirmation_required';

/**
 * The sensitive actions (creating an API key, rotating a webhook secret, adding or removing a factor,
 * new recovery codes, granting admin or owner, the organisation's security settings) ask a dashboard
 * session to have proved its user within the last 15 minutes. Decided here, inside the services, so no
 * door can skip it; API keys and the operator's CLI are credentials of their own and pass.
 */
export function requireConfirmed(actor: Actor, now: number): void {
  if (actor.type !== 'user' || actor.sessionId === null) return;
  if (actor.confirmedAt !== null && now - actor.confirmedAt < CONFIRM_WINDOW_MS) return;
  throw new DomainError(403, CONFIRMATION_REQUIRED, "confirm it's you to continue: this action needs your password and second factor from the last 15 minutes");
}
