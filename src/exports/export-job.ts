import type { Container } from '../container.js';
import type { BackgroundJob } from '../lifecycle/lifecycle-job.js';

/** Builds requested exports and removes expired ones, in the worker. STUB: being built. */
export function startExportJob(container: Container, options: { pollMs?: number | undefined } = {}): BackgroundJob {
  void container;
  void options;
  return { kick() {}, async stop() {} };
}
