import type { TSchema } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { errors } from '../../errors.js';
import { compileValidator, toDetails } from '../validation.js';
import type { FormError } from './views/components.js';

const compiled = new WeakMap<TSchema, ValidateFunction>();

/**
 * Checks a form's values against the API's own body schema, so a field obeys one rule whichever door it
 * comes through, and the page names the same fields the API's `details` would. Throws 400
 * `validation_failed`; returns the value typed by the schema.
 */
export function validateAs<T>(schema: TSchema, value: unknown): T {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = compileValidator(schema, 'body');
    compiled.set(schema, validate);
  }
  if (!validate(value)) throw errors.validation(toDetails(validate.errors ?? [], 'body'));
  return value as T;
}

/** A refused form's problems, one per field, for the page to list and attach to its fields. */
export function formErrors(error: { message: string; details?: readonly { field: string; message: string }[] | undefined }, labels: Record<string, string> = {}): FormError[] {
  if (!error.details || error.details.length === 0) return [{ field: null, message: error.message }];
  return error.details.map((d) => ({ field: d.field in labels ? d.field : null, message: `${labels[d.field] ?? d.field} ${d.message}` }));
}
