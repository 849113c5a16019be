import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../http/app-deps.js';
import { accountPages } from './account.js';
import { apiKeysPages } from './api-keys.js';
import { auditLogPages } from './audit-log.js';
import { billingPages } from './billing.js';
import { billingPortalPages } from './billing-portal.js';
import { exportPages } from './export.js';
import { authPages } from './auth.js';
import { invitationPages } from './invitation.js';
import { membersPages } from './members.js';
import { overviewPages } from './overview.js';
import { myTasksPages } from './my-tasks.js';
import { projectDetailPages } from './project-detail.js';
import { projectPages } from './projects.js';
import { runsPages } from './runs.js';
import { workflowsPages } from './workflows.js';
import { webhookHistoryPages } from './webhook-history.js';
import { webhooksPages } from './webhooks.js';
import { webhookSettingsPages } from './webhook-settings.js';
import { securityPages } from './security.js';
import { securitySettingsPages } from './security-settings.js';
import { twoStepPages } from './two-step.js';
import { ssoPages } from './sso.js';
import { scimPages } from './scim.js';
import { appsPages } from './apps.js';

/** Every page module of the dashboard, registered under /dashboard. */
export const dashboardPages: FastifyPluginAsyncTypebox<AppDeps>[] = [overviewPages, projectPages, apiKeysPages, membersPages, authPages, accountPages, invitationPages, auditLogPages, webhooksPages, webhookHistoryPages, webhookSettingsPages, projectDetailPages, workflowsPages, runsPages, myTasksPages, exportPages, billingPages, billingPortalPages, twoStepPages, securityPages, securitySettingsPages, ssoPages, scimPages, appsPages];
