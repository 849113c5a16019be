import type { FastifyRequest } from 'fastify';

/** OpenAPI vendor key marking routes beyond the specification; typed as {} since FastifySchema has no x- keys. */
export const extension: object = { 'x-extension': true };

/** preValidation of a POST whose body may be left out: none means `{}` (an empty JSON object is accepted too). */
export async function emptyBodyIsObject(request: FastifyRequest): Promise<void> {
  request.body ??= {};
}
