import { errors, type ErrorDetail } from '../../errors.js';
import { BLANK_MESSAGE, isBlank } from '../../lib/text.js';

/**
 * The rules of a person's own fields, whichever door sets them (the invitation's JSON endpoint and form,
 * password links, the account page, the CLI): lengths count Unicode code points, as the API's schemas do.
 */
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;
export const NAME_MAX_LENGTH = 255;

const codePoints = (value: string) => [...value].length;

export function passwordProblems(field: string, password: string): ErrorDetail[] {
  const length = codePoints(password);
  if (length < PASSWORD_MIN_LENGTH) return [{ field, message: `must be at least ${PASSWORD_MIN_LENGTH} characters` }];
  if (length > PASSWORD_MAX_LENGTH) return [{ field, message: `must be at most ${PASSWORD_MAX_LENGTH} characters` }];
  return [];
}

export function nameProblems(field: string, name: string): ErrorDetail[] {
  const length = codePoints(name);
  if (length < 1 || length > NAME_MAX_LENGTH) return [{ field, message: `must be 1 to ${NAME_MAX_LENGTH} characters` }];
  return isBlank(name) ? [{ field, message: BLANK_MESSAGE }] : [];
}

/** Throws 400 `validation_failed` naming every problem, if there is any. */
export function check(details: ErrorDetail[]): void {
  if (details.length > 0) throw errors.validation(details);
}
