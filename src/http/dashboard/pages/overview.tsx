import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../app.js';
import { pageContext, seeOther, sendPage } from '../context.js';
import { dashboardCookies } from '../cookies.js';
import { FormBody, pageSchema } from '../schemas.js';
import { Layout } from '../views/layout.js';

export const overviewPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services, config }) => {
  const cookies = dashboardCookies(config);

  app.get('/', { schema: pageSchema() }, async (request, reply) => {
    const page = pageContext(request);
    const counts = await services.organizations.overview(page.actor);
    return sendPage(
      reply,
      <Layout title="Overview" viewer={page.viewer} csrf={page.csrf}>
        <section aria-labelledby="counts-title">
          <h2 id="counts-title">Your workspace</h2>
          <dl class="stats">
            <div>
              <dt>Projects</dt>
              <dd>{counts.projects}</dd>
            </div>
            <div>
              <dt>Members</dt>
              <dd>{counts.members}</dd>
            </div>
            <div>
              <dt>Webhook subscriptions</dt>
              <dd>{counts.webhooks}</dd>
            </div>
          </dl>
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
  app.post('/logout', { schema: { hide: true, body: FormBody({}), response: { 303: { description: 'To the sign-in page.' } } } }, async (request, reply) => {
    const session = request.dashboard.session;
    if (session) await services.sessions.end(session.actor);
    cookies.clearSession(reply);
    return seeOther(reply, '/dashboard/login?signed_out=1');
  });
};
