import fs from 'node:fs';
import path from 'node:path';

/** Undoes quoted-printable (soft line breaks and =XX escapes), enough to read links out of a raw message. */
export function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The raw messages in `DATA_DIR/mail/`, oldest first, with their file names. */
export function outboxMessages(dataDir: string): { file: string; raw: string }[] {
  const dir = path.join(dataDir, 'mail');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((file) => file.endsWith('.eml'))
    .sort()
    .map((file) => ({ file, raw: fs.readFileSync(path.join(dir, file), 'utf8') }));
}

/** Every distinct invitation token linked from a message. */
export function invitationTokens(raw: string, publicBaseUrl: string): string[] {
  const text = decodeQuotedPrintable(raw);
  const pattern = new RegExp(`${publicBaseUrl.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/invitations/([A-Za-z0-9_-]+)`, 'g');
  return [...new Set([...text.matchAll(pattern)].map((m) => m[1]!))];
}

/** The token of the newest invitation e-mail sent to `email` (the To header matches case-insensitively). */
export function latestInvitationToken(dataDir: string, publicBaseUrl: string, email: string): string {
  const to = new RegExp(`^To: ${email.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'im');
  const message = outboxMessages(dataDir).filter((m) => to.test(m.raw)).at(-1);
  if (!message) throw new Error(`no invitation e-mail to ${email} in the outbox`);
  const tokens = invitationTokens(message.raw, publicBaseUrl);
  if (tokens.length !== 1) throw new Error(`expected one invitation link in ${message.file}, found ${tokens.length}`);
  return tokens[0]!;
}
