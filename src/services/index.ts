import type { AccountsService } from './accounts-service.js';
import type { AdminService } from './admin-service.js';
import type { ApiKeysService } from './api-keys-service.js';
import type { AuditService } from './audit-service.js';
import type { AuthService } from './auth-service.js';
import type { DeliveriesService } from './deliveries-service.js';
import type { ReplayJobsService } from './replay-jobs-service.js';
import type { DeliveryStatsService } from './delivery-stats-service.js';
import type { IdempotencyService } from './idempotency-service.js';
import type { InvitationsService } from './invitations-service.js';
import type { OrganizationsService } from './organizations-service.js';
import type { ProjectsService } from './projects-service.js';
import type { SessionsService } from './sessions-service.js';
import type { UsersService } from './users-service.js';
import type { RunsService } from './runs-service.js';
import type { TasksService } from './tasks-service.js';
import type { UsageService } from './usage-service.js';
import type { WebhooksService } from './webhooks-service.js';
import type { WorkflowsService } from './workflows-service.js';
import type { LifecycleService } from './lifecycle-service.js';
import type { DeletionService } from './deletion-service.js';
import type { ExportsService } from './exports-service.js';

/** The services the HTTP layer and the CLI call; built by the container. */
export interface Services {
  accounts: AccountsService;
  admin: AdminService;
  apiKeys: ApiKeysService;
  audit: AuditService;
  auth: AuthService;
  idempotency: IdempotencyService;
  invitations: InvitationsService;
  projects: ProjectsService;
  users: UsersService;
  webhooks: WebhooksService;
  deliveries: DeliveriesService;
  replayJobs: ReplayJobsService;
  workflows: WorkflowsService;
  tasks: TasksService;
  runs: RunsService;
  sessions: SessionsService;
  organizations: OrganizationsService;
  deliveryStats: DeliveryStatsService;
  usage: UsageService;
  lifecycle: LifecycleService;
  deletion: DeletionService;
  exports: ExportsService;
}
