import { parse as parseFilterText, type Filter } from 'scim2-parse-filter';
import { patchBodyValidation, scimPatch, ScimError, type ScimPatch, type ScimPatchOperation } from 'scim-patch';
import type { ScimGroupRow, UserRow } from '../../db/schema.js';
import type { ScimGroupQuery, ScimUserQuery } from '../../db/repositories/scim-repo.js';
import { DomainError } from '../../errors.js';
import { isValidEmail } from '../../lib/email.js';
import { hasControlCharacter, isStorableText } from '../../lib/text.js';
import { toIso } from '../../lib/time.js';
import { normalizeEmail } from '../identity/users-view.js';

/**
 * The SCIM 2.0 resources (RFC 7643) as this service reads and writes them, and the protocol's parsing: the
 * filter grammar through `scim2-parse-filter`, PATCH through `scim-patch` (docs/decisions.md, "Issue 44").
 * What providers really send is accepted here: ops in any letter case, value objects without `path`,
 * `emails[type eq "work"]`, and Entra's string booleans.
 */

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** A refusal in SCIM's terms: the HTTP status and, where RFC 7644 3.12 names one, the `scimType`. */
export class ScimFault extends DomainError {
  constructor(
    status: number,
    readonly scimType: string | null,
    detail: string,
  ) {
    super(status, scimType ?? (status === 404 ? 'not_found' : 'invalid'), detail);
  }
}

export const scimFaults = {
  invalidValue: (detail: string) => new ScimFault(400, 'invalidValue', detail),
  invalidSyntax: (detail: string) => new ScimFault(400, 'invalidSyntax', detail),
  invalidFilter: (detail: string) => new ScimFault(400, 'invalidFilter', detail),
  uniqueness: (detail: string) => new ScimFault(409, 'uniqueness', detail),
  notFound: (what: 'User' | 'Group', id: string) => new ScimFault(404, null, `${what} ${id} not found`),
};

/** What a provider says about a person, read from a User resource. */
export interface ScimUserInput {
  email: string;
  externalId: string | null;
  givenName: string | null;
  familyName: string | null;
  formatted: string | null;
  displayName: string | null;
  active: boolean;
}

export interface ScimGroupInput {
  displayName: string;
  externalId: string | null;
  memberIds: string[];
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Attribute names are case-insensitive (RFC 7643 2.1): the value of `name` under any spelling. */
function attribute(resource: Json, name: string): unknown {
  if (name in resource) return resource[name];
  const lower = name.toLowerCase();
  for (const key of Object.keys(resource)) if (key.toLowerCase() === lower) return resource[key];
  return undefined;
}

function text(resource: Json, name: string, max = 255): string | null {
  const value = attribute(resource, name);
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw scimFaults.invalidValue(`${name} must be a string`);
  if ([...value].length > max || hasControlCharacter(value) || !isStorableText(value)) throw scimFaults.invalidValue(`${name} must be at most ${max} characters of text`);
  return value;
}

/** `true`/`false`, or the strings Entra sends ("True", "False"); absent: `fallback`. */
function boolean(resource: Json, name: string, fallback: boolean): boolean {
  const value = attribute(resource, name);
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw scimFaults.invalidValue(`${name} must be true or false`);
}

/** A User resource's fields; `active` falls back to `activeFallback` when left out (a PUT that omits it keeps it). */
export function parseUserResource(body: unknown, activeFallback: boolean): ScimUserInput {
  if (!isObject(body)) throw scimFaults.invalidSyntax('the request body must be a JSON object');
  const userName = text(body, 'userName', 254);
  if (userName === null) throw scimFaults.invalidValue('userName is required');
  if (!isValidEmail(userName)) throw scimFaults.invalidValue('userName must be an e-mail address: it is the member\'s sign-in e-mail');
  const nameValue = attribute(body, 'name');
  const name = isObject(nameValue) ? nameValue : {};
  if (nameValue !== undefined && nameValue !== null && !isObject(nameValue)) throw scimFaults.invalidValue('name must be an object');
  return {
    email: userName,
    externalId: text(body, 'externalId'),
    givenName: text(name, 'givenName'),
    familyName: text(name, 'familyName'),
    formatted: text(name, 'formatted'),
    displayName: text(body, 'displayName'),
    active: boolean(body, 'active', activeFallback),
  };
}

/** How the dashboard names the member: the display name, else the formatted name, else given and family names. */
export function displayNameOf(input: ScimUserInput): string | null {
  const joined = [input.givenName, input.familyName].filter((part) => part !== null).join(' ');
  return input.displayName ?? input.formatted ?? (joined === '' ? null : joined);
}

export function parseGroupResource(body: unknown): ScimGroupInput {
  if (!isObject(body)) throw scimFaults.invalidSyntax('the request body must be a JSON object');
  const displayName = text(body, 'displayName');
  if (displayName === null) throw scimFaults.invalidValue('displayName is required');
  const members = attribute(body, 'members');
  if (members !== undefined && members !== null && !Array.isArray(members)) throw scimFaults.invalidValue('members must be an array');
  const memberIds: string[] = [];
  for (const member of (members as unknown[] | undefined) ?? []) {
    const value = isObject(member) ? attribute(member, 'value') : undefined;
    if (typeof value !== 'string' || value === '') throw scimFaults.invalidValue('each member needs a value: the user\'s id');
    memberIds.push(value);
  }
  return { displayName, externalId: text(body, 'externalId'), memberIds: [...new Set(memberIds)] };
}

export function normalizeGroupName(name: string): string {
  return name.trim().toLowerCase();
}

function meta(resourceType: 'User' | 'Group', created: number, updated: number, location: string) {
  return { resourceType, created: toIso(created), lastModified: toIso(updated), location, version: `W/"${updated}"` };
}

export function toUserResource(row: UserRow, baseUrl: string): Json {
  const name: Json = {};
  if (row.given_name !== null) name.givenName = row.given_name;
  if (row.family_name !== null) name.familyName = row.family_name;
  if (row.formatted_name !== null) name.formatted = row.formatted_name;
  return {
    schemas: [USER_SCHEMA],
    id: row.id,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    userName: row.email,
    name,
    ...(row.name !== null ? { displayName: row.name } : {}),
    emails: [{ value: row.email, type: 'work', primary: true }],
    active: row.status !== 'suspended',
    meta: meta('User', row.created_at, row.updated_at, `${baseUrl}/Users/${row.id}`),
  };
}

export function toGroupResource(row: ScimGroupRow, members: readonly { user_id: string; email: string }[] | null, baseUrl: string): Json {
  return {
    schemas: [GROUP_SCHEMA],
    id: row.id,
    displayName: row.display_name,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    ...(members !== null ? { members: members.map((m) => ({ value: m.user_id, display: m.email, $ref: `${baseUrl}/Users/${m.user_id}` })) } : {}),
    meta: meta('Group', row.created_at, row.updated_at, `${baseUrl}/Groups/${row.id}`),
  };
}

export function listResponse(resources: readonly Json[], total: number, startIndex: number): Json {
  return { schemas: [LIST_SCHEMA], totalResults: total, itemsPerPage: resources.length, startIndex, Resources: resources };
}

function parseFilter(filter: string): Filter {
  try {
    return parseFilterText(filter);
  } catch {
    throw scimFaults.invalidFilter(`the filter cannot be read: ${filter.slice(0, 200)}`);
  }
}

/** The `eq` comparisons of a filter joined by `and`, as (lower-cased attribute path, value). */
function equalities(filter: Filter): [string, string][] {
  switch (filter.op) {
    case 'and':
      return filter.filters.flatMap(equalities);
    case 'eq':
      if (typeof filter.compValue !== 'string') throw scimFaults.invalidFilter(`${filter.attrPath} is compared with a string`);
      return [[filter.attrPath.toLowerCase().replace(/^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/, ''), filter.compValue]];
    case '[]':
      // `emails[type eq "work"]`: a member's one e-mail is their work e-mail, so the selector narrows nothing.
      if (filter.attrPath.toLowerCase() === 'emails') return [];
      break;
  }
  throw scimFaults.invalidFilter('only eq comparisons joined by and are supported');
}

/** `userName eq`, `externalId eq`, `emails[type eq "work"].value eq` (and `id eq`), joined by `and`. */
export function userQuery(filter: string | undefined): ScimUserQuery {
  const query: { -readonly [K in keyof ScimUserQuery]: ScimUserQuery[K] } = {};
  if (filter === undefined || filter.trim() === '') return query;
  for (const [path, value] of equalities(parseFilter(filter))) {
    // userName is caseExact=false (RFC 7643 4.1.1): compared on the normalised e-mail.
    if (path === 'username' || path === 'emails.value' || path === 'emails') {
      const email = normalizeEmail(value);
      if (query.emailNormalized !== undefined && query.emailNormalized !== email) query.id = '\u0000';
      query.emailNormalized = email;
    } else if (path === 'externalid') query.externalId = value;
    else if (path === 'id') query.id = value;
    else throw scimFaults.invalidFilter(`users can be filtered by userName, externalId, emails or id, not ${path}`);
  }
  return query;
}

export function groupQuery(filter: string | undefined): ScimGroupQuery {
  const query: { -readonly [K in keyof ScimGroupQuery]: ScimGroupQuery[K] } = {};
  if (filter === undefined || filter.trim() === '') return query;
  for (const [path, value] of equalities(parseFilter(filter))) {
    if (path === 'displayname') query.displayNameNormalized = normalizeGroupName(value);
    else if (path === 'externalid') query.externalId = value;
    else if (path === 'id') query.id = value;
    else throw scimFaults.invalidFilter(`groups can be filtered by displayName, externalId or id, not ${path}`);
  }
  return query;
}

/**
 * Applies a PatchOp body to a resource (a copy). Ops are lower-cased first, since Entra sends `Replace` and
 * RFC 7644 says op names are case-insensitive; the library's own errors become SCIM 400s.
 */
export function applyPatch(resource: Json, body: unknown): Json {
  if (!isObject(body)) throw scimFaults.invalidSyntax('the request body must be a JSON object');
  const operations = attribute(body, 'Operations');
  if (!Array.isArray(operations)) throw scimFaults.invalidSyntax('Operations must be an array');
  const normalized = operations.map((op: unknown) => {
    if (!isObject(op) || typeof op.op !== 'string') throw scimFaults.invalidSyntax('each operation needs an op');
    return { ...op, op: op.op.toLowerCase() } as unknown as ScimPatchOperation;
  });
  const schemas = Array.isArray(body.schemas) ? body.schemas : [];
  try {
    patchBodyValidation({ schemas, Operations: normalized } as ScimPatch);
    return scimPatch({ ...structuredClone(resource), meta: resource.meta } as never, normalized, { mutateDocument: false, treatMissingAsAdd: true }) as unknown as Json;
  } catch (error) {
    if (error instanceof ScimError) {
      const scimType = error.scimCode ?? 'invalidValue';
      throw new ScimFault(400, scimType, error.message || 'the patch cannot be applied');
    }
    // The library's own TypeErrors on shapes it does not expect (a value of the wrong kind): the client's fault.
    if (error instanceof TypeError) throw scimFaults.invalidValue('the patch cannot be applied to this resource');
    throw error;
  }
}
