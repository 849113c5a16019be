import type { Migration, MigrationProvider } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { initialMigration } from './001-initial.js';
import { deliveryEngineMigration } from './002-delivery-engine.js';
import { accountsAuditMigration } from './003-accounts-audit.js';
import { usageStatsMigration } from './004-usage-stats.js';
import { deliveryHistoryMigration } from './005-delivery-history.js';
import { workflowRunsMigration } from './006-workflow-runs.js';
import { lifecycleMigration } from './007-lifecycle.js';
import { authChangesMigration } from './008-auth-changes.js';
import { eventTraceContextMigration } from './009-event-trace-context.js';
import { webhookTrustMigration } from './010-webhook-trust.js';
import { sessionFlashMigration } from './011-session-flash.js';
import { workspaceApiMigration } from './012-workspace-api.js';
import { deliveryControlMigration } from './013-delivery-control.js';
import { accountSecurityMigration } from './014-account-security.js';
import { singleSignOnMigration } from './015-single-sign-on.js';
import { runNumbersMigration } from './016-run-numbers.js';
import { projectCollaboratorsMigration } from './018-project-collaborators.js';
import { provisioningMigration } from './019-provisioning.js';
import { connectedAppsMigration } from './020-connected-apps.js';
import { deliveryOutcomesMigration } from './021-delivery-outcomes.js';
import { signInReviewMigration } from './017-sign-in-review.js';

/**
 * Migrations are listed here in order (not read from a folder) so the compiled build carries them and
 * each can adapt a column type to the dialect. Add new ones at the end; never edit a released one.
 */
export function migrationProvider(dialect: SqlDialect): MigrationProvider {
  return {
    async getMigrations(): Promise<Record<string, Migration>> {
      return {
        '001_initial': initialMigration(dialect),
        '002_delivery_engine': deliveryEngineMigration(),
        '003_accounts_audit': accountsAuditMigration(dialect),
        '004_usage_stats': usageStatsMigration(),
        '005_delivery_history': deliveryHistoryMigration(),
        '006_workflow_runs': workflowRunsMigration(dialect),
        '007_lifecycle': lifecycleMigration(dialect),
        '008_auth_changes': authChangesMigration(dialect),
        '009_event_trace_context': eventTraceContextMigration(),
        '010_webhook_trust': webhookTrustMigration(),
        '011_session_flash': sessionFlashMigration(),
        '012_workspace_api': workspaceApiMigration(),
        '013_delivery_control': deliveryControlMigration(),
        '014_account_security': accountSecurityMigration(dialect),
        '015_single_sign_on': singleSignOnMigration(dialect),
        '016_run_numbers': runNumbersMigration(),
        '017_sign_in_review': signInReviewMigration(dialect),
        '018_project_collaborators': projectCollaboratorsMigration(dialect),
        '019_provisioning': provisioningMigration(dialect),
        '020_connected_apps': connectedAppsMigration(dialect),
        '021_delivery_outcomes': deliveryOutcomesMigration(),
      };
    },
  };
}
