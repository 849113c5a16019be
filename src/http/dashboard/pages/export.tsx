import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../app.js';

/** /dashboard/export (DASHBOARD 3). STUB: being built. */
export const exportPages: FastifyPluginAsyncTypebox<AppDeps> = async () => {};
