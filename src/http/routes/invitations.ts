import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { randomToken } from '../../lib/ids.js';
import type { AppDeps } from '../app.js';
import { requestContext } from '../request-context.js';
import { invitationErrorPage, invitationPage, invitationPageHeaders } from '../pages/invitation-page.js';
import { ErrorResponse } from '../schemas/common.js';
import { AcceptInvitationBody, HtmlPage, TokenParams } from '../schemas/invitations.js';
import { User } from '../schemas/users.js';

const tags = ['Invitations'];

/**
 * Unauthenticated: the token in the link is the credential. It is part of the URL, so these routes log at
 * warn and above only: the per-request info line (which carries the URL) would otherwise write live links.
 */
export const invitationRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const invitations = services.invitations;
  const logLevel = 'warn';

  app.get('/invitations/:token', {
    logLevel,
    schema: {
      tags,
      summary: 'The page an invitation e-mail links to: a form that accepts the invitation',
      security: [],
      params: TokenParams,
      response: {
        200: HtmlPage('The invitation form.'),
        404: HtmlPage('Unknown, used or superseded link.'),
        410: HtmlPage('The link is older than 72 hours; the page says to ask for a new invite.'),
      },
    },
    handler: async (request, reply) => {
      const view = await invitations.view(request.params.token);
      const nonce = randomToken(16);
      reply.headers(invitationPageHeaders(nonce));
      if (view.state === 'open') return reply.code(200).send(invitationPage(view, nonce));
      return reply.code(view.state === 'expired' ? 410 : 404).send(invitationErrorPage(view.state, nonce));
    },
  });

  app.post('/invitations/:token/accept', {
    logLevel,
    schema: {
      tags,
      summary: 'Accept an invitation: the user becomes active with this name and password',
      security: [],
      params: TokenParams,
      body: AcceptInvitationBody,
      response: {
        200: User,
        400: ErrorResponse,
        404: ErrorResponse,
        410: ErrorResponse,
        413: ErrorResponse,
        415: ErrorResponse,
      },
    },
    handler: async (request) => invitations.accept(request.params.token, request.body, requestContext(request, 'api')),
  });
};
