import { formatDay } from '../../lib/time.js';
import { Layout, type Viewer } from './layout.js';

const TITLES: Record<number, string> = {
  400: 'Something in the request was not right',
  401: 'Please sign in',
  403: 'You cannot do that',
  404: 'Page not found',
  405: 'Page not found',
  409: 'That could not be done',
  410: 'This link has expired',
  413: 'That was too large',
  415: 'That could not be read',
  429: 'Too many attempts',
  500: 'Something went wrong',
  503: 'The service is busy',
};

/** The dashboard's HTML answer to every error: the status, a plain sentence, and a way back. */
export function ErrorPage({ status, message, viewer, csrf }: { status: number; message: string; viewer?: Viewer | null; csrf?: string }) {
  const title = TITLES[status] ?? (status >= 500 ? TITLES[500]! : TITLES[400]!);
  return (
    <Layout title={title} viewer={viewer ?? null} csrf={csrf}>
      <p class="lead">{message}</p>
      <p>
        <a href="/dashboard">Go to the dashboard</a>
      </p>
    </Layout>
  );
}

/**
 * A change refused because the workspace is read-only (DASHBOARD 10), whichever form asked: the refusal
 * listed first (role="alert"), then, for a member, what still works and where an owner resumes the
 * subscription (an invitee, not yet a member, is only told).
 */
export function ReadOnlyPage({ message, viewer, csrf }: { message: string; viewer?: Viewer | null; csrf?: string }) {
  // The API's message carries the contract's timestamp; a person reads the day.
  const deletionAt = viewer?.workspace.deletionAt;
  if (deletionAt) message = `This workspace is read-only since its subscription was cancelled. It will be deleted on ${formatDay(deletionAt)}.`;
  return (
    <Layout title="This workspace is read-only" viewer={viewer ?? null} csrf={csrf} errors={[{ field: null, message }]}>
      <p class="lead">Nothing was changed.</p>
      {viewer ? (
        <>
          <p>
            While the subscription is cancelled you can still read everything, export the data, revoke API keys, delete webhook subscriptions
            and change your own account. An owner can resume the subscription on the <a href="/dashboard/billing">Billing</a> page.
          </p>
          <p>
            <a href="/dashboard">Go to the dashboard</a>
          </p>
        </>
      ) : null}
    </Layout>
  );
}
