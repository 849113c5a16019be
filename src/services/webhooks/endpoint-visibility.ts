import { roleAllows } from '../access/permissions.js';
import type { Actor } from '../access/actor.js';

/** What stands in for a hidden value: visibly a placeholder, never mistaken for the value itself. */
export const HIDDEN_VALUE = '•••';

/**
 * An endpoint URL as this actor may see it (review 5, WH1). Receivers often authenticate with a token in the
 * query string or in the URL's user part, so the URL is a credential. Those who may change subscriptions
 * (admins, owners, the operator) see it whole; everyone else sees the host and path with each query value and
 * any user part replaced by "•••", through every door (API, MCP, dashboard).
 */
export function endpointShownTo(actor: Actor, url: string): string {
  if (actor.type !== 'user' || roleAllows(actor.role, 'webhooks', 'update')) return url;
  return maskEndpoint(url);
}

/** The URL with its query values and user part hidden; its host, path, parameter names and fragment kept. */
export function maskEndpoint(url: string): string {
  // The fragment starts at the first "#"; a "?" after it is the fragment's, not a query.
  const hashAt = url.indexOf('#');
  const end = hashAt < 0 ? url.length : hashAt;
  const question = url.indexOf('?');
  const queryAt = question >= 0 && question < end ? question : -1;
  let base = queryAt < 0 ? url.slice(0, end) : url.slice(0, queryAt);
  // The user part sits between "//" and the first "@" before the path.
  const authorityAt = base.indexOf('//') + 2;
  const pathAt = base.indexOf('/', authorityAt);
  const at = base.lastIndexOf('@', pathAt < 0 ? base.length : pathAt);
  if (authorityAt > 1 && at >= authorityAt) base = `${base.slice(0, authorityAt)}${HIDDEN_VALUE}${base.slice(at)}`;
  if (queryAt < 0) return `${base}${url.slice(end)}`;
  const query = url
    .slice(queryAt + 1, end)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq < 0 ? pair : `${pair.slice(0, eq)}=${HIDDEN_VALUE}`;
    })
    .join('&');
  return `${base}?${query}${url.slice(end)}`;
}
