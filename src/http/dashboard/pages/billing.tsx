import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../app.js';

/** /dashboard/billing (DASHBOARD 3). STUB: being built. */
export const billingPages: FastifyPluginAsyncTypebox<AppDeps> = async () => {};
