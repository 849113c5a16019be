import { linkMessage, mailDate } from './link-message.js';
import type { MailMessage } from './mailer.js';

export interface KeyExpiryMailInput {
  to: string;
  organizationName: string;
  /** The key's name, or its prefix when unnamed. */
  keyLabel: string;
  expiresAt: Date;
  /** `{PUBLIC_BASE_URL}/dashboard/api-keys` */
  keysUrl: string;
}

/** Sent 7 days before an API key expires (CONTRACT 16), once per key. */
export function keyExpiryMail(input: KeyExpiryMailInput): MailMessage {
  return linkMessage(
    input.to,
    `${input.organizationName}: your API key "${input.keyLabel}" expires on ${input.expiresAt.toISOString().slice(0, 10)}`,
    [
      `Your ${input.organizationName} API key "${input.keyLabel}" stops working on ${mailDate(input.expiresAt)}; requests with it will then be answered 401 "API key expired".`,
      'Create a new key now and switch whatever uses this one to it before that date.',
    ],
    { text: 'Open your API keys', url: input.keysUrl },
  );
}
