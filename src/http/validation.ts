import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import type { ErrorDetail } from '../errors.js';
import { EMAIL_PATTERN } from '../lib/email.js';
import { invalidTextPaths, TEXT_RULE_MESSAGE, type ValuePath } from '../lib/text.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv, formats?: string[]) => Ajv;


function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true, // report every offending field, not just the first
    coerceTypes: coerce,
    useDefaults: true,
    removeAdditional: false, // unknown body fields are errors, not silently dropped
    strict: false,
    verbose: true, // errors carry their schema, so a `pattern` can name its rule (patternMessage)
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

const DECIMAL_INTEGER = /^-?\d{1,15}$/;

/** Top-level properties declared `integer`: their text must be plain decimal digits. */
function integerProperties(schema: object): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.keys(properties).filter((name) => properties[name]!.type === 'integer');
}

/**
 * Query strings and params are text, so they are coerced, but ajv's coercion reads `1e1`, `0x10` or
 * ` 5` as numbers too. An integer parameter must be written as decimal digits; anything else is refused
 * here with the same `type` error ajv gives for `abc`, alongside whatever else the schema finds.
 */
function strictIntegers(validate: ValidateFunction, names: string[]): ValidateFunction {
  if (names.length === 0) return validate;
  const wrapped = ((data: unknown) => {
    const bad: ErrorObject[] = [];
    if (data !== null && typeof data === 'object') {
      for (const name of names) {
        const value = (data as Record<string, unknown>)[name];
        if (typeof value === 'string' && !DECIMAL_INTEGER.test(value)) {
          bad.push({ keyword: 'type', instancePath: `/${name}`, schemaPath: `#/properties/${name}/type`, params: { type: 'integer' } });
        }
      }
    }
    const ok = validate(data);
    wrapped.errors = bad.length > 0 || !ok ? [...bad, ...(validate.errors ?? [])] : null;
    return wrapped.errors === null;
  }) as ValidateFunction;
  return Object.assign(wrapped, { schema: validate.schema, schemaEnv: validate.schemaEnv });
}

/** A JSON pointer, escaped as ajv writes `instancePath`, so a field's errors from both sources meet. */
function pointerOf(path: ValuePath): string {
  let pointer = '';
  for (const segment of path) pointer += `/${String(segment).replace(/~/g, '~0').replace(/\//g, '~1')}`;
  return pointer;
}

/**
 * The text rule (CONTRACT 1) in its one place: every body and query string a route or a dashboard form
 * accepts passes through here, so U+0000 or an unpaired surrogate anywhere in it (nested, in an array, in a
 * field the schema does not know) is 400 `validation_failed` naming the field, alongside whatever the schema
 * finds, before anything is stored or looked up. Path params are not checked here: an id holding them names
 * nothing, 404 (the path check in app.ts).
 */
function textRule(validate: ValidateFunction): ValidateFunction {
  const wrapped = ((data: unknown) => {
    const ok = validate(data);
    const paths = invalidTextPaths(data);
    if (paths.length === 0) {
      wrapped.errors = ok ? null : validate.errors;
      return ok;
    }
    const bad: ErrorObject[] = paths.map((path) => ({
      keyword: 'text',
      instancePath: pointerOf(path),
      schemaPath: '#',
      params: {},
      message: TEXT_RULE_MESSAGE,
    }));
    // First, so a field that also breaks a schema rule (a NUL in an enum value, say) is named for this.
    wrapped.errors = [...bad, ...(validate.errors ?? [])];
    return false;
  }) as ValidateFunction;
  return Object.assign(wrapped, { schema: validate.schema, schemaEnv: validate.schemaEnv });
}

export function compileValidator(schema: object, httpPart: string | undefined): ValidateFunction {
  if (httpPart === 'body') return textRule(bodyAjv.compile(schema));
  const validate = strictIntegers(textAjv.compile(schema), integerProperties(schema));
  return httpPart === 'querystring' ? textRule(validate) : validate;
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
    case 'text':
      return TEXT_RULE_MESSAGE;
    case 'pattern': {
      const custom = (error as { parentSchema?: { patternMessage?: unknown } }).parentSchema?.patternMessage;
      return typeof custom === 'string' ? custom : 'has an invalid format';
    }
    default:
      return error.message ?? 'is invalid';
  }
}

/** Turns schema errors into one detail per offending field (first message wins per field). */
export function toDetails(errors: (ErrorObject | FastifySchemaValidationError)[], context: string | undefined): ErrorDetail[] {
  const byField = new Map<string, string>();
  // A union of literals fails one `const` per branch: gather them into one list of allowed values.
  const allowedByField = new Map<string, unknown[]>();
  for (const error of errors) {
    if (error.keyword !== 'const') continue;
    const field = fieldOf(error, context);
    allowedByField.set(field, [...(allowedByField.get(field) ?? []), (error.params as { allowedValue: unknown }).allowedValue]);
  }
  for (const error of errors) {
    // anyOf/oneOf wrappers repeat what their branches already said.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    const field = fieldOf(error, context);
    if (byField.has(field)) continue;
    // An empty value a form sends for "any" is allowed, but naming it in the list reads as a stray comma.
    const allowed = error.keyword === 'const' ? allowedByField.get(field)!.filter((v) => v !== '') : [];
    byField.set(field, allowed.length > 1 ? `must be one of: ${allowed.join(', ')}` : describe(error));
  }
  return [...byField].map(([field, message]) => ({ field, message }));
}

/** The dotted path of the offending field; the part itself (`body`, `querystring`) for a top-level error. */
function fieldOf(error: ErrorObject | FastifySchemaValidationError, context: string | undefined): string {
  const params = error.params as Record<string, unknown>;
  let path = (error.instancePath ?? '').split('/').filter(Boolean).join('.');
  if (error.keyword === 'required') path = [path, String(params.missingProperty)].filter(Boolean).join('.');
  if (error.keyword === 'additionalProperties') path = [path, String(params.additionalProperty)].filter(Boolean).join('.');
  return path || (context === 'body' ? 'body' : (context ?? 'request'));
}
