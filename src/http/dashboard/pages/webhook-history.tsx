import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../app.js';

export const webhookHistoryPages: FastifyPluginAsyncTypebox<AppDeps> = async () => {};
