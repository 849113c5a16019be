import type { Actor } from '../services/access/actor.js';
import type { Services } from '../services/index.js';

/** One member as a `<select>` option (their name, sorted), plus the short name tables show. */
export interface MemberOption {
  value: string;
  label: string;
  /** The member's name, or their e-mail while they have none (invited). */
  name: string;
  email: string;
}

/** One collator for every sort: `localeCompare` with options builds one per comparison (measured: 8% of the workflow page). */
const BY_NAME = new Intl.Collator('en', { sensitivity: 'base' });
/**
 * A select is no place for more people than this: past it the list is cut (newest members kept) rather
 * than the page made slow by an unbounded walk.
 */
export const MEMBER_OPTIONS_LIMIT = 1000;

/**
 * Every member of the actor's organisation, invited ones included (a task may wait for someone who has
 * not accepted yet), read in one query of the four columns a list needs (measured: paging whole rows through
 * `listMembers` was 0.35 ms of the audit log's 4 ms).
 */
export async function memberOptions(services: Pick<Services, 'users'>, actor: Actor): Promise<MemberOption[]> {
  const options: MemberOption[] = [];
  for (const user of await services.users.people(actor.orgId, MEMBER_OPTIONS_LIMIT)) {
    const invited = user.status === 'invited' ? ' (invited)' : '';
    options.push({ value: user.id, label: `${user.name ?? user.email}${invited}`, name: user.name ?? user.email, email: user.email });
  }
  // People as names (DASHBOARD 1); the e-mail only where two share a name, or for someone who has none yet.
  const counts = new Map<string, number>();
  for (const o of options) counts.set(o.name, (counts.get(o.name) ?? 0) + 1);
  for (const o of options) if ((counts.get(o.name) ?? 0) > 1 && o.name !== o.email) o.label = `${o.label} <${o.email}>`;
  return options.sort((a, b) => BY_NAME.compare(a.label, b.label));
}

/** id → short name, for tables that show who a task waits for. */
export function memberMap(options: readonly MemberOption[]): Map<string, string> {
  return new Map(options.map((o) => [o.value, o.name]));
}

/**
 * Who an assignee id stands for: "Unassigned" for none, "Removed member" when the id no longer names a
 * member (removing a member unassigns their open tasks, but finished tasks keep the id).
 */
export function memberLabel(map: ReadonlyMap<string, string>, id: string | null | undefined): string {
  if (!id) return 'Unassigned';
  return map.get(id) ?? 'Removed member';
}
