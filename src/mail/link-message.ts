import { escapeHtml } from '../lib/html.js';
import type { MailMessage } from './mailer.js';

/** A date as the service's mails write it: "Sun, 22 Nov 2026 09:30:00 UTC". */
export const mailDate = (date: Date) => date.toUTCString().replace('GMT', 'UTC');

/** A notice mail: paragraphs, then one link, as plain text and as simple HTML saying the same. */
export function linkMessage(to: string, subject: string, paragraphs: string[], link: { text: string; url: string }): MailMessage {
  return {
    to,
    subject,
    text: [...paragraphs, '', `${link.text}: ${link.url}`].join('\n'),
    html: [...paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`), `<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.text)}</a></p>`].join('\n'),
  };
}
