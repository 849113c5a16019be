import type { OrgState } from '../../db/schema.js';
import type { OrganizationLifecycle } from '../../services/lifecycle/lifecycle-service.js';
import type { PageContext } from '../context.js';
import { ActionForm, CsrfField, DangerItem, DangerLink, DangerZone, errorFor, Field, Time, type FormError } from './components.js';
import { Layout } from './layout.js';

export const BILLING = '/dashboard/billing';
export const CANCEL_PATH = `${BILLING}/cancel`;
export const RESUME_PATH = `${BILLING}/resume`;
/** Helper route of the Stripe integration: a POST that sends the owner to Stripe's customer portal. */
export const PORTAL_PATH = `${BILLING}/portal`;
/** The typed-name field of the cancellation step. */
export const CONFIRM_FIELD = 'confirm-name';

const STATE_WORDS: Record<OrgState, string> = {
  active: 'Active',
  read_only: 'Read-only: the subscription is cancelled',
  deleting: 'Being deleted',
};

const BILLING_WORDS: Record<OrganizationLifecycle['billing'], string> = {
  stripe: 'Billed through Stripe',
  manual: 'Managed by the operator',
};

export interface BillingViewProps {
  page: PageContext;
  organization: OrganizationLifecycle;
  /** Whether the viewer may cancel and resume (the owner rule of the lifecycle service). */
  mayChange: boolean;
  /** Stripe is configured and this organisation is billed through it: offer Stripe's customer portal. */
  portal: boolean;
  errors?: readonly FormError[];
}

/** DASHBOARD 3 and 10: the plan, its state in words and dates; the owner's controls for the state it is in. */
export function BillingView({ page, organization: org, mayChange, portal, errors }: BillingViewProps) {
  const { csrf } = page;
  return (
    <Layout title="Billing" viewer={page.viewer} csrf={csrf} current={BILLING} errors={errors}>
      <dl class="facts">
        <div>
          <dt>Plan</dt>
          <dd>Workspace subscription</dd>
        </div>
        <div>
          <dt>Billing</dt>
          <dd>{BILLING_WORDS[org.billing]}</dd>
        </div>
        <div>
          <dt>State</dt>
          <dd>{STATE_WORDS[org.state]}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <Time iso={org.created_at} />
          </dd>
        </div>
        {org.cancelled_at ? (
          <div>
            <dt>Cancelled at</dt>
            <dd>
              <Time iso={org.cancelled_at} />
            </dd>
          </div>
        ) : null}
        {org.deletion_at ? (
          <div>
            <dt>Deletion date</dt>
            <dd>
              <Time iso={org.deletion_at} />
            </dd>
          </div>
        ) : null}
      </dl>

      {org.state === 'read_only' && org.deletion_at ? (
        <p>
          Everyone can still sign in, read everything and export the data, but nothing can be changed. On <Time iso={org.deletion_at} /> the workspace and all its
          data are deleted permanently{mayChange ? ' unless you resume the subscription before then' : ' unless an owner resumes the subscription before then'}.
        </p>
      ) : null}

      {mayChange && org.billing === 'manual' && org.state === 'read_only' ? (
        <section aria-labelledby="resume-title" class="panel">
          <h2 id="resume-title">Resume the subscription</h2>
          <p>The workspace becomes active again at once: changes are allowed, paused workflow runs carry on, and nothing is deleted.</p>
          <ActionForm action={RESUME_PATH} csrf={csrf} label="Resume subscription" />
        </section>
      ) : null}

      {mayChange && portal ? (
        <section aria-labelledby="portal-title" class="panel">
          <h2 id="portal-title">Payment details</h2>
          <p>
            Invoices, the payment method and the subscription itself are managed on Stripe's customer portal: cancel or resume there, and this page
            follows within moments.
          </p>
          <ActionForm action={PORTAL_PATH} csrf={csrf} label="Manage billing" />
        </section>
      ) : null}

      {mayChange && org.billing === 'stripe' && !portal ? (
        <p class="muted">This workspace is billed through Stripe, which is not set up on this server: ask the operator to cancel or resume the subscription.</p>
      ) : null}

      {!mayChange ? <p class="muted">Only an owner can cancel or resume the subscription.</p> : null}

      {mayChange && org.billing === 'manual' && org.state === 'active' ? (
        <DangerZone>
          <DangerItem title="Cancel the subscription" control={<DangerLink href={CANCEL_PATH} label="Cancel subscription" />}>
            The workspace becomes read-only at once and is deleted 30 days later. You can resume the subscription until then.
          </DangerItem>
        </DangerZone>
      ) : null}
    </Layout>
  );
}

export interface CancelViewProps {
  page: PageContext;
  organization: OrganizationLifecycle;
  /** When the workspace would be deleted if cancelled now. */
  deletionAt: string;
  typed?: string;
  errors?: readonly FormError[];
}

/** The confirmation step of "Cancel subscription": what happens and when, then the organisation's name typed. */
export function CancelView({ page, organization: org, deletionAt, typed, errors }: CancelViewProps) {
  return (
    <Layout title="Cancel subscription" viewer={page.viewer} csrf={page.csrf} current={BILLING} errors={errors}>
      <p class="lead">
        Cancel the subscription of <strong>{org.name}</strong>?
      </p>
      <p>
        The workspace becomes read-only at once: everyone can still sign in, read everything and export the data, but nothing can be changed, and workflow
        runs pause. After 30 days, on <Time iso={deletionAt} />, the workspace is deleted permanently with everything in it: projects, workflows, tasks,
        members, API keys, webhooks and the audit log. Until then an owner can resume the subscription and carry on as before.
      </p>
      <p>
        <a href="/dashboard/export">Export the data</a> first if you want to keep it.
      </p>
      <form method="post" action={CANCEL_PATH}>
        <CsrfField token={page.csrf} />
        <Field
          id={CONFIRM_FIELD}
          name="confirm_name"
          label="Organisation name"
          value={typed}
          error={errorFor(errors, CONFIRM_FIELD)}
          hint="Type the organisation's name to confirm."
          autocomplete="off"
          required
        />
        <div class="actions">
          <button type="submit" class="button danger">
            Cancel subscription
          </button>
          <a href={BILLING}>Keep the subscription</a>
        </div>
      </form>
    </Layout>
  );
}
