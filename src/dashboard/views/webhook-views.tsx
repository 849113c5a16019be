import { EVENT_TYPES } from '../../schemas/events.js';
import type { Webhook } from '../../schemas/webhooks.js';
import { Field, Time } from './components.js';
import { RATE_LIMIT_LABEL, type DeliveryControlValues } from '../delivery-control-form.js';

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

/** "Rate limit (per second)" and "Deliver in order" (CONTRACT 14), on the create and edit forms. */
export function DeliveryControlFields({ values, error }: { values: DeliveryControlValues; error: string | undefined }) {
  return (
    <>
      <Field
        id="rate_limit"
        label={RATE_LIMIT_LABEL}
        value={values.rateLimit}
        error={error}
        hint="Attempts started per second, counted across every worker. Deliveries beyond it wait their turn: none fails or uses up a retry. Leave it empty for no limit."
        maxLength={7}
        autocomplete="off"
      />
      <div class="field">
        <label class="checkbox">
          <input type="checkbox" name="ordering" value="fifo" checked={values.ordered} aria-describedby="ordering-hint" /> Deliver in order
        </label>
        <p class="hint" id="ordering-hint">
          One delivery at a time, in the order the events happened. A delivery that keeps failing holds the later ones until it succeeds or
          fails for good (about 3 hours on the default schedule). Replays and test events go out on their own.
        </p>
      </div>
    </>
  );
}

/** "At most 50 attempts started per second, in order: one at a time." (CONTRACT 14) */
export function deliveryControlInWords(webhook: Pick<Webhook, 'rate_limit' | 'ordering'>): string {
  const pace = webhook.rate_limit === null ? 'No rate limit' : `At most ${webhook.rate_limit.toLocaleString('en-US')} ${webhook.rate_limit === 1 ? 'attempt' : 'attempts'} started per second`;
  return webhook.ordering === 'fifo' ? `${pace}; delivered in order, one at a time.` : `${pace}; deliveries go out side by side, in no set order.`;
}
