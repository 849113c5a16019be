import { escapeHtml } from '../lib/html.js';
import type { MailMessage } from './mailer.js';

export interface LifecycleMailInput {
  to: string;
  organizationName: string;
  deletionAt: Date;
  /** `{PUBLIC_BASE_URL}/dashboard/billing` */
  billingUrl: string;
  /** `{PUBLIC_BASE_URL}/dashboard/export` */
  exportUrl: string;
}

function day(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function message(to: string, subject: string, paragraphs: string[], links: { text: string; url: string }[]): MailMessage {
  const text = [...paragraphs, '', ...links.map((l) => `${l.text}: ${l.url}`)].join('\n');
  const html = [
    ...paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`),
    `<ul>${links.map((l) => `<li><a href="${escapeHtml(l.url)}">${escapeHtml(l.text)}</a></li>`).join('')}</ul>`,
  ].join('\n');
  return { to, subject, text, html };
}

/** To every owner when the subscription is cancelled (DASHBOARD 10). */
export function cancellationMail({ to, organizationName, deletionAt, billingUrl, exportUrl }: LifecycleMailInput): MailMessage {
  return message(
    to,
    `${organizationName}: subscription cancelled, workspace read-only`,
    [
      `The subscription of ${organizationName} on Workspace Service was cancelled. The workspace is now read-only.`,
      `It will be deleted permanently on ${day(deletionAt)} (${deletionAt.toUTCString()}), with every project, member, key, webhook and record in it.`,
      'Until then an owner can resume the subscription from the Billing page, and an admin can export the data.',
    ],
    [
      { text: 'Resume the subscription', url: billingUrl },
      { text: 'Export the data', url: exportUrl },
    ],
  );
}

/** 7 days and 1 day before deletion. */
export function deletionReminderMail(input: LifecycleMailInput & { daysLeft: 7 | 1 }): MailMessage {
  const { to, organizationName, deletionAt, billingUrl, exportUrl, daysLeft } = input;
  const when = daysLeft === 1 ? 'tomorrow' : 'in 7 days';
  return message(
    to,
    `${organizationName} will be deleted ${when}`,
    [
      `The workspace ${organizationName} on Workspace Service is read-only since its subscription was cancelled.`,
      `It will be deleted permanently on ${day(deletionAt)} (${deletionAt.toUTCString()}). After that nothing of it can be recovered.`,
      'To keep it, an owner can resume the subscription. To take the data along, an admin can export it.',
    ],
    [
      { text: 'Resume the subscription', url: billingUrl },
      { text: 'Export the data', url: exportUrl },
    ],
  );
}
