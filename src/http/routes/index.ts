import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../app.js';
import { projectRoutes } from './projects.js';

/** Every route plugin of the API, registered in this order by buildApp. */
export const routes: FastifyPluginAsyncTypebox<AppDeps>[] = [projectRoutes];
