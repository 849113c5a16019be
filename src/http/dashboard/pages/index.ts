import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../app.js';
import { overviewPages } from './overview.js';
import { projectPages } from './projects.js';

/** Every page module of the dashboard, registered under /dashboard. */
export const dashboardPages: FastifyPluginAsyncTypebox<AppDeps>[] = [overviewPages, projectPages];
