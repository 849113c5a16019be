import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import type { ErrorDetail } from '../errors.js';
import { EMAIL_PATTERN } from '../lib/email.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv, formats?: string[]) => Ajv;


function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true, // report every offending field, not just the first
    coerceTypes: coerce,
    useDefaults: true,
    removeAdditional: false, // unknown body fields are errors, not silently dropped
    strict: false,
  });
  addFormats(ajv, ['date-time', 'uri']);
  ajv.addFormat('email', EMAIL_PATTERN);
  ajv.addKeyword('modifier');
  ajv.addKeyword('kind');
  return ajv;
}

// Bodies are JSON and must carry the right types; query strings and params are text by nature.
const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

export function compileValidator(schema: object, httpPart: string | undefined): ValidateFunction {
  return httpPart === 'body' ? bodyAjv.compile(schema) : textAjv.compile(schema);
}

function describe(error: ErrorObject | FastifySchemaValidationError): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not an accepted field';
    case 'type':
      return `must be of type ${String(params.type)}`;
    case 'minLength':
      return `must be at least ${String(params.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(params.limit)} characters`;
    case 'minimum':
      return `must be at least ${String(params.limit)}`;
    case 'maximum':
      return `must be at most ${String(params.limit)}`;
    case 'minItems':
      return `must have at least ${String(params.limit)} item(s)`;
    case 'maxItems':
      return `must have at most ${String(params.limit)} items`;
    case 'enum':
      return `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${String(params.allowedValue)}`;
    case 'format':
      return params.format === 'email' ? 'must be a valid e-mail address' : `must be a valid ${String(params.format)}`;
    case 'pattern':
      return 'has an invalid format';
    default:
      return error.message ?? 'is invalid';
  }
}

/** Turns schema errors into one detail per offending field (first message wins per field). */
export function toDetails(errors: (ErrorObject | FastifySchemaValidationError)[], context: string | undefined): ErrorDetail[] {
  const byField = new Map<string, string>();
  for (const error of errors) {
    // anyOf/oneOf wrappers repeat what their branches already said.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    const params = error.params as Record<string, unknown>;
    let path = (error.instancePath ?? '').split('/').filter(Boolean).join('.');
    if (error.keyword === 'required') path = [path, String(params.missingProperty)].filter(Boolean).join('.');
    if (error.keyword === 'additionalProperties') path = [path, String(params.additionalProperty)].filter(Boolean).join('.');
    const field = path || (context === 'body' ? 'body' : (context ?? 'request'));
    if (!byField.has(field)) byField.set(field, describe(error));
  }
  return [...byField].map(([field, message]) => ({ field, message }));
}
