import type { DeliveryControlInput } from '../services/webhooks/webhooks-service.js';
import { MAX_RATE_LIMIT } from '../schemas/webhooks.js';
import { FormText } from './schemas.js';

/** The subscription forms' "Rate limit (per second)" and "Deliver in order" (a checkbox sends `fifo`). */
export const deliveryControlFields = { rate_limit: FormText(16), ordering: FormText(8) };

/** What the two fields hold, to show again after a refusal. */
export interface DeliveryControlValues {
  rateLimit: string;
  ordered: boolean;
}

export const controlValues = (body: { rate_limit?: string | undefined; ordering?: string | undefined }): DeliveryControlValues => ({
  rateLimit: (body.rate_limit ?? '').trim(),
  ordered: body.ordering === 'fifo',
});

export const controlValuesOf = (webhook: { rate_limit: number | null; ordering: string }): DeliveryControlValues => ({
  rateLimit: webhook.rate_limit === null ? '' : String(webhook.rate_limit),
  ordered: webhook.ordering === 'fifo',
});

/**
 * The fields as the service takes them: empty is no limit, a box left unchecked is `none`. Anything but
 * digits is passed on as not a number, for the service's own sentence (the rule is decided there once).
 */
export function controlInput(values: DeliveryControlValues): Required<DeliveryControlInput> {
  const { rateLimit } = values;
  return { rate_limit: rateLimit === '' ? null : /^\d{1,7}$/.test(rateLimit) ? Number(rateLimit) : Number.NaN, ordering: values.ordered ? 'fifo' : 'none' };
}

export const RATE_LIMIT_LABEL = 'Rate limit (per second)';
export const RATE_LIMIT_MESSAGE = `${RATE_LIMIT_LABEL} must be a whole number from 1 to ${MAX_RATE_LIMIT.toLocaleString('en-US')}, or empty for no limit`;
