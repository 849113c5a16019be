import { linkMessage as message, mailDate as when } from './link-message.js';
import type { MailMessage } from './mailer.js';

export interface SsoMailInput {
  to: string;
  organizationName: string;
  at: Date;
}

/** How a sign-in identity came to be linked (DASHBOARD 12, "Who may change sign-in"). */
export type LinkWay = 'email' | 'created' | 'self' | 'invitation';

const WAY_WORDS: Record<LinkWay, string> = {
  email: 'at their first single sign-on, because the provider vouched for their email address in a verified domain',
  created: 'when the provider signed them in for the first time and the organisation creates members on first sign-in',
  self: 'by themselves, from a signed-in and confirmed session ("Link my single sign-on account")',
  invitation: 'when they accepted their invitation with single sign-on',
};

export interface LinkedIdentity {
  /** The member's own address here. */
  member: string;
  issuer: string;
  subject: string;
  /** The address the provider gave, if any. */
  providerEmail: string | null;
  way: LinkWay;
}

function providerAccount(link: LinkedIdentity): string {
  return `${link.providerEmail ?? 'an account without an email address'} (subject ${link.subject}) at ${link.issuer}`;
}

/**
 * A change to who can sign in to the organisation: the connection saved, replaced or deleted, a domain
 * verified or removed, the requirement switched. Every owner hears of it, whoever made it.
 */
export function ssoSettingsChangedMail(input: SsoMailInput, by: string, changes: readonly string[], settingsUrl: string): MailMessage {
  return message(
    input.to,
    `${input.organizationName}: single sign-on settings changed`,
    [
      `${by} changed the single sign-on settings of ${input.organizationName} on ${when(input.at)}:`,
      ...changes.map((change) => `- ${change}`),
      'Whoever controls the identity provider can sign in as the members it vouches for. If you did not expect this change, review the settings and the audit log now.',
    ],
    { text: 'Review single sign-on', url: settingsUrl },
  );
}

/** A member's account was linked to an account at the identity provider: every owner is told. */
export function ssoLinkedOwnersMail(input: SsoMailInput, link: LinkedIdentity, auditUrl: string): MailMessage {
  return message(
    input.to,
    `${input.organizationName}: ${link.member} was linked to single sign-on`,
    [
      `On ${when(input.at)}, the account of ${link.member} in ${input.organizationName} was linked to ${providerAccount(link)}, ${WAY_WORDS[link.way]}.`,
      'From now on that provider account signs in as them. If this is not expected, remove the member or ask them to review their account, and check the audit log.',
    ],
    { text: 'Open the audit log', url: auditUrl },
  );
}

/** The member whose account was linked hears of it too. */
export function ssoLinkedUserMail(input: SsoMailInput, link: LinkedIdentity, securityUrl: string): MailMessage {
  return message(
    input.to,
    `${input.organizationName}: your account was linked to single sign-on`,
    [
      `On ${when(input.at)}, your ${input.organizationName} account was linked to ${providerAccount(link)}. That account now signs you in.`,
      'If this was not you, tell an owner of your organisation now.',
    ],
    { text: 'Review your account security', url: securityUrl },
  );
}
