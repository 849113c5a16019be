import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../http/app-deps.js';
import { countOf } from '../../lib/text.js';
import { canChange } from '../../services/access/workspace.js';
import { pageContext, seeOther, sendPage } from '../context.js';
import { dashboardCookies } from '../cookies.js';
import { FormBody, pageSchema } from '../schemas.js';
import type { DailyRequests } from '../../services/lifecycle/usage-service.js';
import { BarChart } from '../views/charts.js';
import { Table, Time, Url } from '../views/components.js';
import { formatIsoDay } from '../../lib/time.js';
import { DeliveryHealthChart } from '../views/delivery-health.js';
import { Layout } from '../views/layout.js';
import { formatCount } from '../views/numbers.js';
import type { Webhook } from '../../schemas/webhooks.js';
import { subscriptionHref } from '../views/delivery-views.js';
import { DISABLED_WHY, SubscriptionStatus } from '../views/webhook-views.js';

/** 'YYYY-MM-DD' → "22 Nov": the page's day without its year. */
const shortDay = (day: string) => formatIsoDay(day).slice(0, -5);

/** "1,234 requests". */
function requestsTotal(days: readonly DailyRequests[]): string {
  const total = days.reduce((sum, d) => sum + d.count, 0);
  return `${formatCount(total)} ${total === 1 ? 'request' : 'requests'}`;
}

/** "Requests per day": API requests made with the organisation's keys, today last. */
function RequestsChart({ days }: { days: readonly DailyRequests[] }) {
  const total = requestsTotal(days);
  // A label every seven days counted back from today, so today's bar is always labelled.
  const points = days.map((d, i) => ({ values: [d.count], tick: (days.length - 1 - i) % 7 === 0 ? shortDay(d.day) : undefined }));
  return (
    <>
      <p class="chart-summary">{`${total} in the last ${days.length} days`}</p>
      <BarChart id="requests-chart" label={`Requests per day, last ${days.length} days (UTC): ${total}`} series={[{ label: 'Requests', className: 'chart-requests' }]} points={points} />
      <details class="chart-data">
        <summary>Requests per day as a table</summary>
        <Table caption="Requests per day" headers={['Day (UTC)', 'Requests']}>
          {days.map((d) => (
            <tr>
              <td>
                <time dateTime={d.day}>{formatIsoDay(d.day)}</time>
              </td>
              <td>{formatCount(d.count)}</td>
            </tr>
          ))}
        </Table>
      </details>
    </>
  );
}

/** Failing and disabled subscriptions in words, each linked to its page (DASHBOARD 6). */
function UnhealthySubscriptions({ webhooks }: { webhooks: readonly Webhook[] }) {
  return (
    <div class="notice-panel warning" role="status">
      <p>
        <strong>{webhooks.length === 1 ? 'A webhook subscription needs attention' : `${webhooks.length} webhook subscriptions need attention`}</strong>
      </p>
      <ul class="health-list">
        {webhooks.map((webhook) => (
          <li>
            <a href={subscriptionHref(webhook.id)} class="webhook-url">
              <Url href={webhook.url} />
            </a>
            : <SubscriptionStatus webhook={webhook} />
            {/* When and why, so the person on call knows what to fix (review 5, OV1). */}
            {webhook.status === 'disabled' && webhook.disabled_at ? (
              <>
                {' '}
                on <Time iso={webhook.disabled_at} /> because {DISABLED_WHY[webhook.disabled_reason ?? 'failing']}
              </>
            ) : null}
          </li>
        ))}
      </ul>
    </div>
  );
}

export const overviewPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services, config }) => {
  const cookies = dashboardCookies(config);

  app.get('/', { schema: pageSchema() }, async (request, reply) => {
    const page = pageContext(request);
    const [counts, health, requests, unhealthy, mine] = await Promise.all([
      services.organizations.overview(page.actor),
      services.deliveryStats.hourly(page.actor),
      services.usage.dailyRequests(page.actor),
      services.webhooks.unhealthy(page.actor),
      services.tasks.countMine(page.actor),
    ]);
    const overdue = mine.overdue;
    return sendPage(
      reply,
      <Layout title="Overview" viewer={page.viewer} csrf={page.csrf} current="/dashboard">
        {/* A person's own work first (the review's member opened the overview and found only operations). */}
        <section aria-labelledby="my-work-title">
          <h2 id="my-work-title">Your tasks</h2>
          {mine.open === 0 ? (
            <p>Nothing to do: no open tasks are assigned to you.</p>
          ) : (
            <p>
              {`${countOf(mine.open, 'open task')} assigned to you`}
              {overdue > 0 ? (
                <>
                  {', '}
                  <strong class="overdue">{`${overdue} overdue`}</strong>
                </>
              ) : null}
              {'. '}
              <a href="/dashboard/tasks">Open My tasks</a>
            </p>
          )}
        </section>
        <section aria-labelledby="counts-title">
          <h2 id="counts-title">Your workspace</h2>
          <dl class="stats">
            <div>
              <dt>
                <a href="/dashboard/projects">Projects</a>
              </dt>
              <dd>{counts.projects}</dd>
            </div>
            <div>
              <dt>
                <a href="/dashboard/members">Members</a>
              </dt>
              <dd>{counts.members}</dd>
            </div>
            <div>
              <dt>
                <a href="/dashboard/webhooks">Webhook subscriptions</a>
              </dt>
              <dd>{counts.webhooks}</dd>
            </div>
          </dl>
          {counts.projects === 0 && canChange(page.actor, 'projects', 'create') ? (
            <p>
              No projects yet. <a href="/dashboard/projects">Create your first project</a>.
            </p>
          ) : null}
        </section>
        <section aria-labelledby="health-title">
          <h2 id="health-title">Webhook health (last 24 hours)</h2>
          {unhealthy.length > 0 ? <UnhealthySubscriptions webhooks={unhealthy} /> : null}
          <DeliveryHealthChart id="health-chart" health={health} />
        </section>
        <section aria-labelledby="requests-title">
          <h2 id="requests-title">Requests per day (last 30 days)</h2>
          <RequestsChart days={requests} />
        </section>
        <section aria-labelledby="api-title">
          <h2 id="api-title">Using the API</h2>
          <p>
            Create a key under <a href="/dashboard/api-keys">API keys</a>, then call <code>{config.publicBaseUrl}/v1</code> with{' '}
            <code>Authorization: Bearer &lt;key&gt;</code>. The reference is at <a href="/docs">/docs</a>.
          </p>
        </section>
      </Layout>,
    );
  });

  // "Sign out" ends this session everywhere: the row is gone, so no instance accepts the cookie again.
  app.post('/logout', { config: { dashboardEnrollment: true }, schema: { hide: true, body: FormBody({}), response: { 303: { description: 'To the sign-in page.' } } } }, async (request, reply) => {
    const session = request.dashboard.session;
    if (session) await services.sessions.end(session.actor);
    cookies.clearSession(reply);
    return seeOther(reply, '/dashboard/login?signed_out=1');
  });
};
