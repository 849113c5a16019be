import { escapeHtml } from '../lib/html.js';
import { formatUtc } from '../lib/time.js';
import type { MailMessage } from './mailer.js';

export interface InvitationMailInput {
  to: string;
  organizationName: string;
  role: string;
  /** Who invited them, named in the mail so the recipient knows whom to ask; null when an operator did. */
  invitedBy: string | null;
  link: string;
  expiresAt: Date;
}

/** The invitation e-mail, as plain text and as simple HTML carrying the same link. */
export function invitationMail({ to, organizationName, role, invitedBy, link, expiresAt }: InvitationMailInput): MailMessage {
  const expires = formatUtc(expiresAt.getTime());
  const who = invitedBy ? `${invitedBy} invited you` : 'You have been invited';
  const text = [
    `${who} to join ${organizationName} on Workspace Service as ${role}.`,
    '',
    'Open this link to choose your name and password:',
    link,
    '',
    `The link works once and expires on ${expires}. If it has expired, ask an administrator to invite you again.`,
  ].join('\n');
  const html = [
    `<p>${escapeHtml(who)} to join <strong>${escapeHtml(organizationName)}</strong> on Workspace Service as ${escapeHtml(role)}.</p>`,
    `<p><a href="${escapeHtml(link)}">Accept the invitation</a></p>`,
    `<p>Or copy this link into your browser:<br>${escapeHtml(link)}</p>`,
    `<p>The link works once and expires on ${escapeHtml(expires)}. If it has expired, ask an administrator to invite you again.</p>`,
  ].join('\n');
  return { to, subject: `You're invited to join ${organizationName}`, text, html };
}
