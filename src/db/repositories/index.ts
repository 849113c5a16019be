import { apiKeysRepository } from './api-keys-repo.js';
import { auditRepository } from './audit-repo.js';
import { collaboratorsRepository } from './collaborators-repo.js';
import { scimRepository } from './scim-repo.js';
import { oauthRepository } from './oauth-repo.js';
import { authTokensRepository } from './auth-tokens-repo.js';
import { deletionRepository } from './deletion-repo.js';
import { deliveriesRepository } from './delivery-history-repo.js';
import { deliveryQueueRepository } from './delivery-queue-repo.js';
import { deliveryRetentionRepository } from './delivery-retention-repo.js';
import { eventsRepository } from './events-repo.js';
import { exportReadsRepository } from './export-reads-repo.js';
import { exportsRepository } from './exports-repo.js';
import type { RepoContext } from './executor.js';
import { idempotencyRepository } from './idempotency-repo.js';
import { instancesRepository } from './instances-repo.js';
import { invitationsRepository } from './invitations-repo.js';
import { organizationsRepository } from './organizations-repo.js';
import { projectsRepository } from './projects-repo.js';
import { replayJobsRepository } from './replay-jobs-repo.js';
import { runsRepository } from './runs-repo.js';
import { requestCountsRepository } from './request-counts-repo.js';
import { sessionsRepository } from './sessions-repo.js';
import { secondFactorsRepository } from './second-factors-repo.js';
import { webauthnChallengesRepository } from './webauthn-challenges-repo.js';
import { ssoRepository } from './sso-repo.js';
import { stripeEventsRepository } from './stripe-events-repo.js';
import { tasksRepository } from './tasks-repo.js';
import { usersRepository } from './users-repo.js';
import { webhooksRepository } from './webhooks-repo.js';
import { workflowsRepository } from './workflows-repo.js';

export function createRepositories(ctx: RepoContext) {
  return {
    organizations: organizationsRepository(ctx),
    users: usersRepository(ctx),
    apiKeys: apiKeysRepository(ctx),
    projects: projectsRepository(ctx),
    collaborators: collaboratorsRepository(ctx),
    scim: scimRepository(ctx),
    oauth: oauthRepository(ctx),
    webhooks: webhooksRepository(ctx),
    workflows: workflowsRepository(ctx),
    tasks: tasksRepository(ctx),
    runs: runsRepository(ctx),
    invitations: invitationsRepository(ctx),
    idempotency: idempotencyRepository(ctx),
    events: eventsRepository(ctx),
    deliveries: deliveriesRepository(ctx),
    deliveryQueue: deliveryQueueRepository(ctx),
    deliveryRetention: deliveryRetentionRepository(ctx),
    audit: auditRepository(ctx),
    sessions: sessionsRepository(ctx),
    secondFactors: secondFactorsRepository(ctx),
    webauthnChallenges: webauthnChallengesRepository(ctx),
    authTokens: authTokensRepository(ctx),
    requestCounts: requestCountsRepository(ctx),
    replayJobs: replayJobsRepository(ctx),
    deletion: deletionRepository(ctx),
    exports: exportsRepository(ctx),
    exportReads: exportReadsRepository(ctx),
    stripeEvents: stripeEventsRepository(ctx),
    sso: ssoRepository(ctx),
    instances: instancesRepository(ctx),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
