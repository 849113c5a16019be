/** A secret shown once, on the page the action lands on, then gone (DASHBOARD 1, 4, 6). */
export interface FlashSecret {
  /** What it is, so only the page that shows this kind reads it. */
  kind: 'api_key' | 'webhook_secret' | 'rotated_secret' | 'recovery_codes' | 'scim_token';
  /** The id of what it belongs to (the key, the subscription). */
  id: string;
  value: string;
  /** What it belongs to, as people read it (the subscription's URL). */
  label?: string;
  /** When a rotated-out secret stops signing (epoch ms). */
  previousExpiresAt?: number | null;
}

/** What the page after a form shows once: the session's one-time slot, never the address. */
export interface Flash {
  /** What changed, in a sentence ("Project "Apollo" created."). */
  notice?: string;
  /** Why the form was refused: listed first, as an alert, on the page the form was on. */
  problem?: string;
  secret?: FlashSecret;
  /** What a refused form held (its free text only: never a password, code or token), shown again so nothing typed is lost. */
  typed?: TypedField[];
}

/** One field of a refused form, as typed. */
export interface TypedField {
  label: string;
  value: string;
}

/**
 * The free-text fields a refused form carries back (DASHBOARD 1: a refused form keeps its input). An allow
 * list, so a password, a one-time code or a confirmation never rides in the session's slot.
 */
const TYPED_LABELS: Record<string, string> = {
  title: 'Title',
  name: 'Name',
  description: 'Description',
  reason: 'Reason',
  url: 'Endpoint URL',
  email: 'Email',
  issuer: 'Issuer URL',
  client_id: 'Client ID',
};

export function typedFields(body: unknown): TypedField[] {
  if (typeof body !== 'object' || body === null) return [];
  const typed: TypedField[] = [];
  for (const [field, label] of Object.entries(TYPED_LABELS)) {
    const value = (body as Record<string, unknown>)[field];
    if (typeof value === 'string' && value.trim() !== '') typed.push({ label, value: value.slice(0, 10_000) });
  }
  return typed;
}

export function asFlash(value: unknown): Flash | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Flash) : null;
}

/** The secret of the slot when it is of this kind (and, given an id, for that thing). */
export function flashSecret(flash: Flash | null | undefined, kind: FlashSecret['kind'], id?: string): FlashSecret | null {
  const secret = flash?.secret;
  if (!secret || secret.kind !== kind || (id !== undefined && secret.id !== id)) return null;
  return secret;
}
