import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../http/app-deps.js';
import { requestContext } from '../../http/request-context.js';
import { ErrorResponse } from '../../schemas/common.js';
import { AcceptInvitationBody, TokenParams } from '../../schemas/invitations.js';
import { User } from '../../schemas/users.js';

const tags = ['Invitations'];

/**
 * Unauthenticated: the token in the link is the credential. It is part of the URL, so these routes log at
 * warn and above only: the per-request info line (which carries the URL) would otherwise write live links.
 */
export const invitationRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const invitations = services.invitations;
  const logLevel = 'warn';

  // The e-mailed link (CONTRACT 5). The page itself is the dashboard's, a form that works without script and
  // ends signed in; the redirect carries no referrer and is never cached, as the token is in both URLs.
  app.get('/invitations/:token', {
    logLevel,
    // A page for browsers, not an API operation: hidden from the document (acceptInvitation describes it).
    schema: {
      hide: true,
      summary: 'The page an invitation e-mail links to: redirects to the dashboard form that accepts the invitation',
      security: [],
      params: TokenParams,
      response: {
        303: { description: 'To `/dashboard/invitations/{token}`: the invitation form (404 or 410 page there for unknown, used or expired links).' },
      },
    },
    handler: async (request, reply) =>
      reply
        .code(303)
        .headers({ 'referrer-policy': 'no-referrer', 'cache-control': 'no-store' })
        .header('location', `/dashboard/invitations/${encodeURIComponent(request.params.token)}`)
        .send(),
  });

  app.post('/invitations/:token/accept', {
    logLevel,
    schema: {
      tags,
      operationId: 'acceptInvitation',
      summary: 'Accept an invitation: the user becomes active with this name and password',
      security: [],
      params: TokenParams,
      body: AcceptInvitationBody,
      response: {
        200: User,
        400: ErrorResponse,
        // workspace_read_only: the organisation's subscription is cancelled (DASHBOARD 10); sso_required: the
        // invitee's domain must sign in with single sign-on (DASHBOARD 12), accepted through the provider instead.
        403: ErrorResponse,
        404: ErrorResponse,
        410: ErrorResponse,
        413: ErrorResponse,
        415: ErrorResponse,
      },
    },
    handler: async (request) => invitations.accept(request.params.token, request.body, requestContext(request, 'api')),
  });
};
