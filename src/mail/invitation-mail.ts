import { escapeHtml } from '../lib/html.js';
import type { MailMessage } from './mailer.js';

export interface InvitationMailInput {
  to: string;
  organizationName: string;
  role: string;
  link: string;
  expiresAt: Date;
}

/** The invitation e-mail, as plain text and as simple HTML carrying the same link. */
export function invitationMail({ to, organizationName, role, link, expiresAt }: InvitationMailInput): MailMessage {
  const expires = expiresAt.toUTCString();
  const text = [
    `You have been invited to join ${organizationName} on Workspace Service as ${role}.`,
    '',
    'Open this link to choose your name and password:',
    link,
    '',
    `The link works once and expires on ${expires}. If it has expired, ask an administrator to invite you again.`,
  ].join('\n');
  const html = [
    `<p>You have been invited to join <strong>${escapeHtml(organizationName)}</strong> on Workspace Service as ${escapeHtml(role)}.</p>`,
    `<p><a href="${escapeHtml(link)}">Accept the invitation</a></p>`,
    `<p>Or copy this link into your browser:<br>${escapeHtml(link)}</p>`,
    `<p>The link works once and expires on ${escapeHtml(expires)}. If it has expired, ask an administrator to invite you again.</p>`,
  ].join('\n');
  return { to, subject: `You're invited to join ${organizationName}`, text, html };
}
