import createClient, { type Client, type ClientPathsWithMethod, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import { WorkspaceApiError } from './errors.js';
import type { paths } from './openapi.js';
import { RETRY_DEFAULTS, retryingFetch, timerSleep, type RetryOptions } from './retry.js';

type MediaType = `${string}/${string}`;
type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';

/** The openapi-fetch client over the service's `paths`: calls resolve to `{ data, error, response }`. */
export type RawWorkspaceClient = Client<paths>;

/** The API paths that have `method`, e.g. `PathsWith<'get'>` is every path a GET can be sent to. */
export type PathsWith<M extends HttpMethod> = ClientPathsWithMethod<RawWorkspaceClient, M>;

// openapi-fetch's own rule for its second argument (not exported there): optional when nothing in it is required.
type RequiredKeysOf<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
type InitParam<Init> = RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];

/** What a successful `method` call on `path` resolves to: its 2xx body, `undefined` for a 204. */
export type ResponseData<P extends PathsWith<M>, M extends HttpMethod, Init = object> = Extract<
  FetchResponse<NonNullable<paths[P][M]>, Init, MediaType>,
  { data: unknown }
>['data'];

/**
 * A method of the client: the same path, params and body checks as openapi-fetch's, but it resolves to the
 * response body and throws a `WorkspaceApiError` for an error status.
 */
export type DataMethod<M extends HttpMethod> = <P extends PathsWith<M>, I extends MaybeOptionalInit<paths[P], M>>(
  url: P,
  ...init: InitParam<I>
) => Promise<ResponseData<P, M, I>>;

type Page<P extends PathsWith<'get'>> = ResponseData<P, 'get'>;

/** The list endpoints: GET paths answering `{ data: [...], next_cursor }`. */
export type ListPath = {
  [P in PathsWith<'get'>]: [Page<P>] extends [never] ? never : Page<P> extends { data: readonly unknown[]; next_cursor: string | null } ? P : never;
}[PathsWith<'get'>];

/** One item of a list endpoint's `data`. */
export type ListItem<P extends ListPath> = Page<P> extends { data: readonly (infer T)[] } ? T : never;

/** `paginate`: every item of a list endpoint, page after page. */
export type PaginateMethod = <P extends ListPath, I extends MaybeOptionalInit<paths[P], 'get'>>(
  url: P,
  ...init: InitParam<I>
) => AsyncGenerator<ListItem<P>, void, undefined>;

/** Options of `createWorkspaceClient`. */
export interface WorkspaceClientOptions {
  /** Where the service is, e.g. `https://workspace.example.com` (paths start with /v1). */
  baseUrl: string;
  /** The API key (`wsk_…`), sent as `Authorization: Bearer <apiKey>`. Omit it only to accept an invitation. */
  apiKey?: string;
  /** The fetch to send requests with. Default `globalThis.fetch`. */
  fetch?: (request: Request) => Promise<Response>;
  /** Retry bounds; see `RetryOptions`. */
  retry?: RetryOptions;
  /** The User-Agent header (where the runtime lets a script set it: not in browsers). Default `workspace-service-client`. */
  userAgent?: string;
  /**
   * Waits `ms` milliseconds between attempts. Default: a timer. For tests (advance a fake clock instead of
   * waiting) and custom schedulers.
   */
  sleep?: (ms: number) => Promise<void>;
}

/** The client `createWorkspaceClient` returns. */
export interface WorkspaceClient {
  /** GET `path`: resolves to the 200 body; throws `WorkspaceApiError` for an error status. */
  GET: DataMethod<'get'>;
  /** POST `path` (with an Idempotency-Key unless the call gives one): resolves to the 2xx body. */
  POST: DataMethod<'post'>;
  /** PUT `path`: resolves to the 200 body. */
  PUT: DataMethod<'put'>;
  /** PATCH `path`: resolves to the 200 body. */
  PATCH: DataMethod<'patch'>;
  /** DELETE `path`: resolves to undefined (204). */
  DELETE: DataMethod<'delete'>;
  /**
   * Every item of a list endpoint, following `next_cursor` until it is null: `for await (const p of
   * ws.paginate('/v1/projects')) …`. Filters and `limit` pass through (default 100 a page).
   */
  paginate: PaginateMethod;
  /**
   * The underlying openapi-fetch client, for `{ data, error, response }` results or middleware
   * (`ws.raw.use(...)`); its calls get the same key, idempotency and retries.
   */
  raw: RawWorkspaceClient;
}

/** Items a page asks for when `paginate` is not given a `limit`: the most the API allows, for fewer round trips. */
const PAGE_SIZE = 100;

/**
 * A typed client of Workspace Service. Every call carries the API key, every POST an Idempotency-Key (the
 * same on each retry of that call), and failed attempts are retried within `retry`: a 429 after its
 * Retry-After, a 503 with Retry-After and network errors on idempotent calls (every POST is one, by its key).
 *
 * ```ts
 * const ws = createWorkspaceClient({ baseUrl: 'https://workspace.example.com', apiKey: process.env.WS_KEY! });
 * const project = await ws.POST('/v1/projects', { body: { name: 'Apollo' } });
 * for await (const p of ws.paginate('/v1/projects')) console.log(p.name);
 * ```
 */
export function createWorkspaceClient(options: WorkspaceClientOptions): WorkspaceClient {
  const baseFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const headers: Record<string, string> = { 'User-Agent': options.userAgent ?? 'workspace-service-client' };
  if (options.apiKey !== undefined) headers.Authorization = `Bearer ${options.apiKey}`;
  const raw = createClient<paths>({
    baseUrl: options.baseUrl,
    headers,
    fetch: retryingFetch({ fetch: baseFetch, retry: { ...RETRY_DEFAULTS, ...options.retry }, sleep: options.sleep ?? timerSleep }),
  });

  type AnyCall = (url: string, init?: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
  const dataMethod = (call: AnyCall) =>
    async function (url: string, init?: unknown): Promise<unknown> {
      const { data, error, response } = await call(url, init);
      if (!response.ok) throw new WorkspaceApiError(response, error);
      return data;
    };
  const GET = dataMethod(raw.GET as AnyCall);

  async function* paginate(url: string, init?: { params?: { query?: Record<string, unknown> } & Record<string, unknown> } & Record<string, unknown>) {
    const query: Record<string, unknown> = { limit: PAGE_SIZE, ...init?.params?.query };
    for (;;) {
      const page = (await GET(url, { ...init, params: { ...init?.params, query } })) as { data: unknown[]; next_cursor: string | null };
      yield* page.data;
      if (page.next_cursor === null) return;
      query.cursor = page.next_cursor;
    }
  }

  return {
    GET: GET as DataMethod<'get'>,
    POST: dataMethod(raw.POST as AnyCall) as DataMethod<'post'>,
    PUT: dataMethod(raw.PUT as AnyCall) as DataMethod<'put'>,
    PATCH: dataMethod(raw.PATCH as AnyCall) as DataMethod<'patch'>,
    DELETE: dataMethod(raw.DELETE as AnyCall) as DataMethod<'delete'>,
    paginate: paginate as PaginateMethod,
    raw,
  };
}
