import { escapeHtml } from '../lib/html.js';
import type { MailMessage } from './mailer.js';

export interface PasswordResetMailInput {
  to: string;
  organizationName: string;
  link: string;
  expiresAt: Date;
}

/** The "Forgot password?" e-mail, as plain text and as simple HTML carrying the same link. */
export function passwordResetMail({ to, organizationName, link, expiresAt }: PasswordResetMailInput): MailMessage {
  const expires = expiresAt.toUTCString();
  const text = [
    `Someone asked to reset the password of your ${organizationName} account on Workspace Service.`,
    '',
    'Open this link to choose a new password:',
    link,
    '',
    `The link works once and expires on ${expires}.`,
    'If you did not ask for this, ignore this e-mail: your password stays as it is.',
  ].join('\n');
  const html = [
    `<p>Someone asked to reset the password of your <strong>${escapeHtml(organizationName)}</strong> account on Workspace Service.</p>`,
    `<p><a href="${escapeHtml(link)}">Choose a new password</a></p>`,
    `<p>Or copy this link into your browser:<br>${escapeHtml(link)}</p>`,
    `<p>The link works once and expires on ${escapeHtml(expires)}.</p>`,
    '<p>If you did not ask for this, ignore this e-mail: your password stays as it is.</p>',
  ].join('\n');
  return { to, subject: `Reset your ${organizationName} password`, text, html };
}
