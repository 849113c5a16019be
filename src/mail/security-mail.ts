import { linkMessage as message, mailDate as when } from './link-message.js';
import type { Mailer, MailMessage } from './mailer.js';

const NOT_YOU = 'If this was not you, sign in, change your password and review your sessions and passkeys now, or ask an owner of your organisation for help.';

export interface SecurityMailInput {
  to: string;
  organizationName: string;
  /** `{PUBLIC_BASE_URL}/dashboard/account/security` */
  securityUrl: string;
  at: Date;
}

/** A second factor was added to or removed from the account (DASHBOARD 11). */
export function factorChangedMail(input: SecurityMailInput, change: string): MailMessage {
  return message(
    input.to,
    `${input.organizationName}: ${change}`,
    [`${change} on your ${input.organizationName} account on Workspace Service, on ${when(input.at)}.`, NOT_YOU],
    { text: 'Review your account security', url: input.securityUrl },
  );
}

export function recoveryCodeUsedMail(input: SecurityMailInput, left: number): MailMessage {
  return message(
    input.to,
    `${input.organizationName}: a recovery code was used to sign in`,
    [
      `A recovery code was used to sign in to your ${input.organizationName} account on ${when(input.at)}. It cannot be used again; ${left} ${left === 1 ? 'code is' : 'codes are'} left.`,
      left <= 3 ? 'Generate new recovery codes on your security page before you run out.' : 'You can generate new recovery codes on your security page at any time.',
      NOT_YOU,
    ],
    { text: 'Review your account security', url: input.securityUrl },
  );
}

export function lockoutMail(input: SecurityMailInput, minutes: number): MailMessage {
  return message(
    input.to,
    `${input.organizationName}: sign-in paused after wrong codes`,
    [
      `Someone gave the right password for your ${input.organizationName} account but then 10 wrong codes within 15 minutes (last on ${when(input.at)}). Two-step sign-in for this account is paused for ${minutes} minutes.`,
      'Your password is known to whoever tried. If this was not you, change your password now.',
    ],
    { text: 'Review your account security', url: input.securityUrl },
  );
}

export function factorsResetMail(input: SecurityMailInput): MailMessage {
  return message(
    input.to,
    `${input.organizationName}: your two-step verification was reset`,
    [
      `An operator removed your authenticator app, recovery codes and passkeys, and ended your sessions, on ${when(input.at)}. Sign in with your password and set up two-step verification again.`,
      NOT_YOU,
    ],
    { text: 'Set up two-step verification', url: input.securityUrl },
  );
}

export function factorsResetOwnersMail(input: SecurityMailInput, member: string): MailMessage {
  return message(
    input.to,
    `${input.organizationName}: two-step verification of ${member} was reset`,
    [`An operator removed the second factors and passkeys of ${member} and ended their sessions, on ${when(input.at)} (the audit log has the entry).`],
    { text: 'Open the audit log', url: input.securityUrl },
  );
}

export function requirementMail(input: SecurityMailInput, deadline: Date): MailMessage {
  return message(
    input.to,
    `${input.organizationName} requires two-step verification`,
    [
      `${input.organizationName} now requires two-step verification of every member. Set up an authenticator app or a passkey by ${when(deadline)}.`,
      'After that date the dashboard asks you to set it up before anything else. Your API keys keep working.',
    ],
    { text: 'Set up two-step verification', url: input.securityUrl },
  );
}

/** Sends after the answer is decided; a mail server that fails is logged, never the user's problem. */
export function sendSecurityMail(mailer: Mailer, log: { error(obj: object, msg: string): void }, mail: MailMessage, userId: string): Promise<void> {
  return mailer.send(mail).catch((err: unknown) => log.error({ userId, err: { message: (err as Error).message } }, 'account security e-mail could not be sent'));
}

/** An owner signed in without single sign-on while the organisation requires it (DASHBOARD 12): every owner hears of it. */
export function breakGlassMail(input: SecurityMailInput, owner: string): MailMessage {
  return message(
    input.to,
    `${input.organizationName}: an owner signed in without single sign-on`,
    [
      `${owner} signed in to ${input.organizationName} with a password and a second factor on ${when(input.at)}, although the organisation requires single sign-on (break glass for owners).`,
      'If this was expected (the identity provider is down, say), nothing needs doing. If not, review the audit log and that owner\'s sessions now.',
    ],
    { text: 'Open the audit log', url: input.securityUrl },
  );
}
