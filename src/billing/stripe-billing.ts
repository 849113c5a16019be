import type { Config } from '../config.js';
import type { Store } from '../db/store.js';
import type { Clock } from '../lib/time.js';
import type { LifecycleService } from '../services/lifecycle-service.js';

/** How the Stripe client reaches Stripe's API; tests point it at a local server (ContainerOptions.stripeApi). */
export interface StripeApiOptions {
  host: string;
  port: number;
  protocol: 'http' | 'https';
}

export interface StripeBillingDeps {
  config: NonNullable<Config['stripe']>;
  store: Store;
  clock: Clock;
  lifecycle: LifecycleService;
  api?: StripeApiOptions | undefined;
}

/** Stripe drives the subscription when configured (DASHBOARD 10). STUB: being built. */
export function createStripeBilling(deps: StripeBillingDeps) {
  void deps;
  return {};
}

export type StripeBilling = ReturnType<typeof createStripeBilling>;
