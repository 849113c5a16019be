import { linkMessage as message, mailDate as when } from './link-message.js';
import type { MailMessage } from './mailer.js';

export interface WebhookHealthMailInput {
  to: string;
  organizationName: string;
  url: string;
  failingSince: Date;
  /** `{PUBLIC_BASE_URL}/dashboard/webhooks/{id}` */
  subscriptionUrl: string;
}

/** To owners and admins once a subscription has been failing for 24 hours (CONTRACT 11). */
export function webhookFailingMail(input: WebhookHealthMailInput, disableAfter: string | null): MailMessage {
  return message(
    input.to,
    `${input.organizationName}: webhook deliveries to ${input.url} have been failing for a day`,
    [
      `Every delivery attempt to ${input.url} has failed since ${when(input.failingSince)}.`,
      'Deliveries are retried on their schedule; the delivery history shows each attempt\'s response or error.',
      disableAfter === null
        ? 'The subscription stays active however long this lasts.'
        : `If no attempt succeeds within ${disableAfter} of the first failure, the service disables the subscription and stops sending to it.`,
    ],
    { text: 'Open the subscription', url: input.subscriptionUrl },
  );
}

/** To owners and admins when the service disables a subscription (CONTRACT 11). */
export function webhookDisabledMail(input: WebhookHealthMailInput & { reason: 'failing' | 'gone'; disabledAt: Date }): MailMessage {
  const why =
    input.reason === 'gone'
      ? 'its endpoint answered 410 Gone, which says it will not take deliveries any more'
      : `every attempt to it failed from ${when(input.failingSince)} on`;
  return message(
    input.to,
    `${input.organizationName}: webhook subscription ${input.url} was disabled`,
    [
      `The service disabled the subscription to ${input.url} on ${when(input.disabledAt)}: ${why}.`,
      'No attempt is made while it is disabled. Its waiting and new deliveries are kept as cancelled, so nothing is lost.',
      'Once the endpoint works, enable the subscription ("Enable subscription"), then replay its failed deliveries ("Replay failed deliveries") to send what it missed.',
    ],
    { text: 'Open the subscription', url: input.subscriptionUrl },
  );
}
