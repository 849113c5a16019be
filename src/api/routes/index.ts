import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../http/app-deps.js';
import { deliveryRoutes } from './deliveries.js';
import { invitationRoutes } from './invitations.js';
import { projectRoutes } from './projects.js';
import { userRoutes } from './users.js';
import { webhookRoutes } from './webhooks.js';
import { workflowRoutes } from './workflows.js';
import { taskRoutes } from './tasks.js';
import { organizationRoutes } from './organization.js';
import { adminRoutes } from './admin.js';

/** Every route plugin of the API, registered in this order by buildApp. */
export const routes: FastifyPluginAsyncTypebox<AppDeps>[] = [
  projectRoutes,
  webhookRoutes,
  deliveryRoutes,
  userRoutes,
  invitationRoutes,
  workflowRoutes,
  taskRoutes,
  organizationRoutes,
  adminRoutes,
];
