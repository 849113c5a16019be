import type { Container } from '../container.js';

export interface BackgroundJob {
  kick(): void;
  stop(): Promise<void>;
}

/** Deletion reminders and deletions, in the worker beside deliveries and runs. STUB: being built. */
export function startLifecycleJob(container: Container, options: { pollMs?: number | undefined } = {}): BackgroundJob {
  void container;
  void options;
  return { kick() {}, async stop() {} };
}
