import type { TSchema } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { errors } from '../errors.js';
import { sentence } from '../lib/text.js';
import { compileValidator, toDetails } from '../http/validation.js';
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

/**
 * A validator's clause about a field as a person reads it: "must be at least 1 characters" is an empty
 * field ("Enter a name"), counts agree with their nouns ("at least 1 character").
 */
export function fieldMessage(label: string, message: string): string {
  if (/^must be at least 1 characters?/.test(message)) return `Enter ${/^[aeiou]/i.test(label) ? 'an' : 'a'} ${label.toLowerCase()}`;
  if (/^must have at least 1 item/.test(message)) return `Choose at least one ${label.toLowerCase().replace(/s$/, '')}`;
  return `${label} ${message.replace(/\b1 (character|item|day|hour|minute|second)s\b/g, '1 $1')}`;
}

/** A refused form's problems, one per field, for the page to list and attach to its fields. */
export function formErrors(error: { message: string; details?: readonly { field: string; message: string }[] | undefined }, labels: Record<string, string> = {}): FormError[] {
  if (!error.details || error.details.length === 0) return [{ field: null, message: sentence(error.message) }];
  return error.details.map((d) => ({ field: d.field in labels ? d.field : null, message: fieldMessage(labels[d.field] ?? d.field, d.message) }));
}

/**
 * The sentence of the 400 page for a form (or a page's query) its route's own schema refused: something no
 * form of ours sends, so no form is shown again, but the problems are named by field, a value the text rule
 * refuses (U+0000, an unpaired surrogate: CONTRACT 1) included, as the API's `details` would name them.
 */
export function schemaRefusalMessage(error: { validation?: Parameters<typeof toDetails>[0] | undefined; validationContext?: string | undefined }): string {
  const problems = toDetails(error.validation ?? [], error.validationContext).map((d) => `${d.field} ${d.message}`);
  const named = problems.length > 0 ? ` Problems: ${problems.join('; ')}.` : '';
  return `The form was not filled in as expected.${named} Go back and try again.`;
}
