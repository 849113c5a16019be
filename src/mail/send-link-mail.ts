import type { FastifyBaseLogger } from 'fastify';
import type { Mailer, MailMessage } from './mailer.js';

/**
 * Sends a mail that carries a credential link (an invitation, a password link) after the change that made
 * the link has committed. A failed send keeps the link (the user or an admin asks for a new one) and is
 * logged with the user and organisation ids; the token never reaches the log, not even inside the
 * transport's error message.
 */
export async function sendLinkMail(
  mailer: Mailer,
  log: Pick<FastifyBaseLogger, 'error'>,
  message: MailMessage,
  context: { token: string; userId: string; orgId: string; failure: string },
): Promise<void> {
  try {
    await mailer.send(message);
  } catch (err) {
    const { message: text = String(err), code } = err as { message?: string; code?: unknown };
    log.error({ userId: context.userId, orgId: context.orgId, err: { message: text.replaceAll(context.token, '[redacted]'), code } }, context.failure);
  }
}
