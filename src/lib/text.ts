/** True when the text holds a C0 control character (NUL included) or DEL. */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code <= 0x1f || code === 0x7f) return true;
  }
  return false;
}

declare global {
  interface String {
    /** ES2024 (V8 11.3, Node 20): false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

/** What the text rule (CONTRACT 1) says of a string that breaks it. */
export const TEXT_RULE_MESSAGE = 'must not contain U+0000 or unpaired surrogates';

/**
 * The text rule (CONTRACT 1): any Unicode text except U+0000 and unpaired surrogates (a high surrogate not
 * followed by a low one, a low one not preceded by a high one). PostgreSQL refuses the first outright, and
 * both drivers would silently write U+FFFD for the second, so neither is ever stored.
 *
 * Two native scans rather than a charCode loop: faster at every length measured (docs/decisions.md,
 * Issue 11), allocation-free, and V8 answers `isWellFormed` at once for a one-byte (Latin-1) string.
 */
export function isStorableText(text: string): boolean {
  return !text.includes('\0') && text.isWellFormed();
}

/** A location in a parsed value: object keys and array indexes from the root. */
export type ValuePath = (string | number)[];

const NO_PATHS: readonly ValuePath[] = Object.freeze([]);

/** Nesting walked by plain recursion (every real body); deeper, the explicit stack of walkDeep takes over. */
const MAX_RECURSION = 100;

/**
 * The path of every string in a parsed value (JSON, a query string, a form) that breaks the text rule, in
 * document order; an object key that breaks it is named by its own path. Empty (shared, frozen) when all is
 * well, the usual case, so an ordinary request allocates nothing but the path stack.
 */
export function invalidTextPaths(value: unknown): readonly ValuePath[] {
  if (typeof value === 'string') return isStorableText(value) ? NO_PATHS : [[]];
  if (value === null || typeof value !== 'object') return NO_PATHS;
  return walk(value, [], null) ?? NO_PATHS;
}

type Found = ValuePath[] | null;

/** Recursion (measured about twice as fast as an explicit stack for ordinary bodies); `path` is shared. */
function walk(value: object, path: ValuePath, found: Found): Found {
  if (path.length >= MAX_RECURSION) return walkDeep(value, path, found);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) found = visit(value[i], i, path, found);
  } else {
    for (const key in value) {
      if (!isStorableText(key)) {
        // The key names the problem; what it holds is not looked at separately.
        (found ??= []).push([...path, key]);
        continue;
      }
      found = visit((value as Record<string, unknown>)[key], key, path, found);
    }
  }
  return found;
}

function visit(item: unknown, key: string | number, path: ValuePath, found: Found): Found {
  if (typeof item === 'string') {
    if (!isStorableText(item)) (found ??= []).push([...path, key]);
  } else if (item !== null && typeof item === 'object') {
    path.push(key);
    found = walk(item, path, found);
    path.pop();
  }
  return found;
}

/** One object or array being walked by walkDeep, with the way back to where that walk began. */
interface Frame {
  value: Record<string, unknown> | unknown[];
  keys: string[] | null; // null for an array
  next: number;
  key: string | number | undefined;
  parent: Frame | undefined;
}

function frameOf(value: object, key: string | number | undefined, parent: Frame | undefined): Frame {
  return Array.isArray(value)
    ? { value, keys: null, next: 0, key, parent }
    : { value: value as Record<string, unknown>, keys: Object.keys(value), next: 0, key, parent };
}

function pathTo(prefix: ValuePath, frame: Frame, last: string | number): ValuePath {
  const tail: ValuePath = [last];
  for (let f: Frame | undefined = frame; f?.parent; f = f.parent) tail.push(f.key!);
  return [...prefix, ...tail.reverse()];
}

/**
 * The same walk with an explicit stack, for what nests deeper than MAX_RECURSION: a 1 MiB JSON body can
 * nest far deeper than the call stack reaches, and a RangeError would be a 500.
 */
function walkDeep(value: object, prefix: ValuePath, found: Found): Found {
  const stack: Frame[] = [frameOf(value, undefined, undefined)];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const { keys } = frame;
    const size = keys === null ? (frame.value as unknown[]).length : keys.length;
    if (frame.next >= size) {
      stack.pop();
      continue;
    }
    const index = frame.next++;
    let key: string | number;
    let item: unknown;
    if (keys === null) {
      key = index;
      item = (frame.value as unknown[])[index];
    } else {
      key = keys[index]!;
      item = (frame.value as Record<string, unknown>)[key];
      if (!isStorableText(key)) {
        (found ??= []).push(pathTo(prefix, frame, key));
        continue;
      }
    }
    if (typeof item === 'string') {
      if (!isStorableText(item)) (found ??= []).push(pathTo(prefix, frame, key));
    } else if (item !== null && typeof item === 'object') {
      stack.push(frameOf(item, key, frame));
    }
  }
  return found;
}

/** Messages of services are clauses ("project not found"); a page shows them as sentences. */
export function sentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

const sizes = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

/** A size as people read it: "512 B", "9 KB", "1.4 MB", "2.1 GB" (1 KB = 1,024 B, as file managers count). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  // Whole numbers from 10 up: "12 MB", not "12.3 MB"; one decimal below, where it still says something.
  const shown = unit === 0 || value >= 10 ? Math.round(value) : Math.round(value * 10) / 10;
  return `${sizes.format(shown)} ${units[unit]}`;
}

const counts = new Intl.NumberFormat('en-US');

/** "1 delivery", "2 deliveries", "1,500 minutes": a count with its noun agreeing. */
export function countOf(n: number, singular: string, pluralForm = `${singular}s`): string {
  return `${counts.format(n)} ${n === 1 ? singular : pluralForm}`;
}

/** What a blank name is told (CONTRACT 4). */
export const BLANK_MESSAGE = 'must not be blank';

// White_Space and format characters (Cf: zero-width space's neighbours, joiners, bidi marks) draw nothing.
const INVISIBLE_ONLY = /^[\p{White_Space}\p{Cf}]*$/u;

/**
 * CONTRACT 4: a name (project, workflow, task, API key, organisation) needs one character a person can see.
 * Nothing is trimmed: a name that passes is stored as typed.
 */
export function isBlank(text: string): boolean {
  return INVISIBLE_ONLY.test(text);
}
