import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../config.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  /** Resolves once the message is handed to the SMTP server or written to the outbox; rejects otherwise. */
  send(message: MailMessage): Promise<void>;
  close(): void;
}

export type MailerConfig = Pick<Config, 'smtpUrl' | 'dataDir' | 'mailFrom'>;

// The API answers only after the hand-over, so a hanging mail server must not hold a request for minutes.
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

let written = 0;

/**
 * `20261122T093000123Z-00000001-<hex>.eml`: names sort by the time they were written; the counter keeps
 * that order within one millisecond, the random part keeps names of several processes apart.
 */
function outboxFileName(at: Date): string {
  const sequence = String(++written % 1e8).padStart(8, '0');
  return `${at.toISOString().replace(/[-:.]/g, '')}-${sequence}-${randomBytes(6).toString('hex')}.eml`;
}

/**
 * Without SMTP_URL every message is written as an `.eml` file under `DATA_DIR/mail/` (development and
 * tests read them there); with it, messages go to that SMTP server.
 */
export function createMailer(config: MailerConfig): Mailer {
  if (config.smtpUrl) {
    const transport: Transporter = nodemailer.createTransport({ url: config.smtpUrl, ...SMTP_TIMEOUTS });
    return {
      async send(message) {
        await transport.sendMail({ from: config.mailFrom, ...message });
      },
      close: () => transport.close(),
    };
  }

  const outbox = path.join(config.dataDir, 'mail');
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(message) {
      const info = await transport.sendMail({ from: config.mailFrom, ...message });
      await fs.mkdir(outbox, { recursive: true });
      const file = path.join(outbox, outboxFileName(new Date()));
      // Written aside then renamed, so a reader of the outbox never sees half a message.
      await fs.writeFile(`${file}.tmp`, info.message as Buffer);
      await fs.rename(`${file}.tmp`, file);
    },
    close: () => transport.close(),
  };
}
