import type { Container } from '../container.js';

export interface RunningWorker {
  stop(): Promise<void>;
}

/**
 * Starts the webhook delivery worker for this process (`serve` runs it beside the API, `worker` alone).
 * Placeholder until the delivery engine lands: it starts nothing.
 */
export async function startDeliveryWorker(_container: Container): Promise<RunningWorker> {
  return { async stop() {} };
}
