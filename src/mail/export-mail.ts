import { escapeHtml } from '../lib/html.js';
import { formatBytes } from '../lib/text.js';
import { formatUtc } from '../lib/time.js';
import type { MailMessage } from './mailer.js';

export interface ExportReadyMailInput {
  to: string;
  organizationName: string;
  /** `{PUBLIC_BASE_URL}/dashboard/export`: the download needs a signed-in admin, so the mail links the page. */
  exportUrl: string;
  expiresAt: Date;
  sizeBytes: number;
}

/** To whoever asked for the export, when its ZIP is ready (DASHBOARD 9). */
export function exportReadyMail({ to, organizationName, exportUrl, expiresAt, sizeBytes }: ExportReadyMailInput): MailMessage {
  const paragraphs = [
    `The data export of ${organizationName} you requested on Workspace Service is ready (a ZIP of ${formatBytes(sizeBytes)}).`,
    `Download it from the Export page while signed in as an admin or owner, until ${formatUtc(expiresAt.getTime())}. After that it is removed.`,
  ];
  return {
    to,
    subject: `${organizationName}: your data export is ready`,
    text: [...paragraphs, '', `Export page: ${exportUrl}`].join('\n'),
    html: [...paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`), `<p><a href="${escapeHtml(exportUrl)}">Open the Export page</a></p>`].join('\n'),
  };
}
