import { Type, type TObject, type TProperties } from '@sinclair/typebox';

/** A response that is an HTML page, not JSON. */
export const HtmlPage = (description: string) => ({ description, content: { 'text/html': { schema: Type.String() } } });

/**
 * Dashboard routes are pages, not API: hidden from the OpenAPI document, answering HTML. Their schemas
 * still describe every input, so the validator refuses what no form of ours sends.
 */
export const htmlResponses = {
  200: HtmlPage('The page.'),
  303: { description: 'See other: the next page (after a form, or to sign in).' },
  400: HtmlPage('The page again with the problems listed.'),
  403: HtmlPage('Not allowed.'),
  404: HtmlPage('Not found.'),
  409: HtmlPage('The page again with the conflict explained.'),
  429: HtmlPage('Too many attempts.'),
};

/**
 * A posted form: its fields (all text, as browsers send them) plus the CSRF token and the page the form
 * was on (where a refusal returns to), nothing else.
 */
export function FormBody<P extends TProperties>(properties: P): TObject<P & { _csrf: ReturnType<typeof Type.String> }> {
  return Type.Object({ ...properties, _csrf: Type.String({ maxLength: 128 }), _from: Type.Optional(Type.String({ maxLength: 2048 })) }, { additionalProperties: false }) as never;
}

/** An optional text field of a form, bounded so a huge value is refused before any work. */
export const FormText = (maxLength = 1024) => Type.Optional(Type.String({ maxLength }));

export const NoQuery = Type.Object({}, { additionalProperties: false });

export function pageSchema(): { hide: true; querystring: typeof NoQuery; response: typeof htmlResponses };
export function pageSchema<Q extends TObject>(querystring: Q): { hide: true; querystring: Q; response: typeof htmlResponses };
export function pageSchema(querystring: TObject = NoQuery) {
  return { hide: true, querystring, response: htmlResponses };
}
