import { pino } from 'pino';
import { createContainer, type Container, type ContainerOptions } from '../../src/container.js';
import { buildApp, type App } from '../../src/app.js';
import type { TestEnv } from './test-env.js';

/** Another instance of the service on the same database (and Redis, when configured): its own container, pool and app. */
export interface SecondInstance {
  container: Container;
  app: App;
  close(): Promise<void>;
}

export async function startSecondInstance(env: TestEnv, options: Pick<ContainerOptions, 'outboundCa' | 'clock'> = {}): Promise<SecondInstance> {
  const container = await createContainer(env.config, { logger: pino({ level: 'silent' }), ...options });
  const app = await buildApp(container);
  await app.ready();
  return {
    container,
    app,
    async close() {
      await app.close();
      await container.close();
    },
  };
}
