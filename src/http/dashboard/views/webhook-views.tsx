import { EVENT_TYPES } from '../../../services/events.js';
import type { Webhook } from '../../../services/webhooks-service.js';
import { Time } from './components.js';

/** One checkbox per event, named by the event; the fieldset carries the group's error. */
export function EventsGroup({ chosen, error }: { chosen: readonly string[]; error: string | undefined }) {
  return (
    <fieldset class="checkboxes" id="events" aria-invalid={error ? 'true' : undefined} aria-describedby={error ? 'events-hint events-error' : 'events-hint'}>
      <legend>Events</legend>
      <p class="hint" id="events-hint">
        The subscription receives only the events chosen here.
      </p>
      {error ? <p class="error-message" id="events-error">{error}</p> : null}
      <div class="checkbox-grid">
        {EVENT_TYPES.map((event) => (
          <label class="checkbox">
            <input type="checkbox" name="events" value={event} checked={chosen.includes(event)} /> {event}
          </label>
        ))}
      </div>
    </fieldset>
  );
}


/** Why the service disabled a subscription, as a sentence's end. */
export const DISABLED_WHY: Record<NonNullable<Webhook['disabled_reason']>, string> = {
  failing: 'every delivery attempt to it had failed for too long',
  gone: 'its endpoint answered 410 Gone',
};

/** A subscription's health in words (DASHBOARD 6): Active, Failing since DATE, Disabled. */
export function SubscriptionStatus({ webhook }: { webhook: Pick<Webhook, 'status' | 'failing_since'> }) {
  if (webhook.status === 'disabled') return <span class="status status-disabled">Disabled</span>;
  if (webhook.failing_since) {
    return (
      <span class="status status-failing">
        Failing since <Time iso={webhook.failing_since} />
      </span>
    );
  }
  return <span class="status status-active">Active</span>;
}

/** A signing secret shown this once: read-only, labelled "Signing secret", with a Copy button the script reveals. */
export function SecretField({ value }: { value: string }) {
  return (
    <div class="secret">
      <label for="new-secret">Signing secret</label>
      <input id="new-secret" type="text" value={value} readOnly autocomplete="off" />
      <button type="button" data-copy-target="new-secret" hidden>
        Copy
      </button>
    </div>
  );
}
