import type { StepKind, WorkflowStepDefinition } from '../../db/schema.js';
import { errors, fieldError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { BLANK_MESSAGE, isBlank } from '../../lib/text.js';
import { DAY_MS } from '../../lib/time.js';
import type { Repositories } from '../../db/repositories/index.js';

export const STEP_KINDS: readonly StepKind[] = ['task', 'approval', 'wait'];
export const MAX_WAIT_MS = 30 * DAY_MS;
export const MAX_DUE_IN_MS = 365 * DAY_MS;

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: DAY_MS, w: 7 * DAY_MS };

/**
 * Reads a duration as people type it: `90s`, `15m`, `2h`, `3d`, `1w`, combined (`1d 12h`, `1h30m`), or
 * ISO 8601 (`PT15M`, `P1DT2H`). Whole numbers only; null when it is none of these.
 */
export function parseStepDuration(text: string): number | null {
  const value = text.trim().toLowerCase();
  if (value === '') return null;
  const iso = /^p(?:(\d+)w)?(?:(\d+)d)?(?:t(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?)?$/.exec(value);
  if (iso && value !== 'p' && !value.endsWith('t')) {
    const [w, d, h, m, s] = iso.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number, number];
    return w * UNIT_MS.w! + d * DAY_MS + h * UNIT_MS.h! + m * UNIT_MS.m! + s * UNIT_MS.s!;
  }
  const parts = /^(?:\d+\s*[smhdw]\s*)+$/.test(value) ? [...value.matchAll(/(\d+)\s*([smhdw])/g)] : [];
  if (parts.length === 0) return null;
  const total = parts.reduce((sum, [, n, unit]) => sum + Number(n) * UNIT_MS[unit!]!, 0);
  return Number.isSafeInteger(total) ? total : null;
}

/** A duration in words, largest units first: "1 day 12 hours", "90 seconds" reads "1 minute 30 seconds". */
export function formatStepDuration(ms: number): string {
  const units: [number, string][] = [
    [DAY_MS, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ];
  const words: string[] = [];
  let rest = ms;
  for (const [size, name] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) words.push(`${n} ${name}${n === 1 ? '' : 's'}`);
    rest -= n * size;
  }
  return words.length > 0 ? words.join(' ') : '0 seconds';
}

/** A duration as ISO 8601, largest units first: 90 s is `PT1M30S`, 1 day 12 hours `P1DT12H` (the API's form). */
export function formatIsoDuration(ms: number): string {
  let rest = Math.round(ms / 1000);
  const days = Math.floor(rest / 86_400);
  rest -= days * 86_400;
  const hours = Math.floor(rest / 3600);
  rest -= hours * 3600;
  const minutes = Math.floor(rest / 60);
  const seconds = rest - minutes * 60;
  const time = `${hours ? `${hours}H` : ''}${minutes ? `${minutes}M` : ''}${seconds ? `${seconds}S` : ''}`;
  if (days === 0 && time === '') return 'PT0S';
  return `P${days ? `${days}D` : ''}${time ? `T${time}` : ''}`;
}

/** 1 to 255 code points, like a project name, and not blank (CONTRACT 4); nothing is trimmed. */
export function checkText(value: string, field: string): string {
  const length = [...value].length;
  if (length < 1 || length > 255) throw fieldError(field, 'must be 1 to 255 characters');
  if (isBlank(value)) throw fieldError(field, BLANK_MESSAGE);
  return value;
}

/** Up to 10,000 code points; empty means none. */
export function optionalLongText(value: string | null | undefined, field: string): string | null {
  if (value === undefined || value === null || value === '') return null;
  if ([...value].length > 10_000) throw fieldError(field, 'must be at most 10,000 characters');
  return value;
}

/** A step as a door hands it over: text as typed (durations included); empty strings mean "not given". */
export interface StepInput {
  type: string;
  title?: string | null | undefined;
  assignee_id?: string | null | undefined;
  due_in?: string | null | undefined;
  duration?: string | null | undefined;
}

const given = (value: string | null | undefined): value is string => value !== undefined && value !== null && value !== '';

function readDuration(text: string, field: string, min: number, max: number, bound: string): number {
  const ms = parseStepDuration(text);
  if (ms === null) throw fieldError(field, 'must be a duration such as 30m, 2h, 3d or 1d 12h');
  if (ms < min || ms > max) throw fieldError(field, `must be between 1 second and ${bound}`);
  return ms;
}

/** An assignee must be a member of the organisation, invited ones included. */
export async function requireMember(repos: Repositories, orgId: string, userId: string, field: string): Promise<void> {
  if (!(await repos.users.findById(orgId, userId))) throw fieldError(field, 'must be a member of this organisation');
}

/** Validates one step (every field error at once where they are independent) into its stored form. */
export async function readStep(repos: Repositories, orgId: string, input: StepInput): Promise<WorkflowStepDefinition> {
  const kind = input.type as StepKind;
  if (!STEP_KINDS.includes(kind)) throw fieldError('type', 'must be one of task, approval, wait');
  const problems: { field: string; message: string }[] = [];
  const attempt = <T>(read: () => T): T | null => {
    try {
      return read();
    } catch (err) {
      const details = (err as { details?: { field: string; message: string }[] }).details;
      if (!details) throw err;
      problems.push(...details);
      return null;
    }
  };
  const step: WorkflowStepDefinition = { id: newId('step'), kind, title: null, assignee_id: null, due_in_ms: null, duration_ms: null };
  if (kind === 'wait') {
    if (given(input.title)) step.title = attempt(() => checkText(input.title!, 'title'));
    if (!given(input.duration)) problems.push({ field: 'duration', message: 'is required for a Wait step' });
    else step.duration_ms = attempt(() => readDuration(input.duration!, 'duration', 1000, MAX_WAIT_MS, '30 days'));
    if (given(input.assignee_id)) problems.push({ field: 'assignee_id', message: 'is only for Task and Approval steps' });
    if (given(input.due_in)) problems.push({ field: 'due_in', message: 'is only for Task steps' });
  } else {
    if (!given(input.title)) problems.push({ field: 'title', message: 'is required for a Task or Approval step' });
    else step.title = attempt(() => checkText(input.title!, 'title'));
    if (given(input.duration)) problems.push({ field: 'duration', message: 'is only for Wait steps' });
    if (given(input.due_in)) {
      if (kind === 'approval') problems.push({ field: 'due_in', message: 'is only for Task steps' });
      else step.due_in_ms = attempt(() => readDuration(input.due_in!, 'due_in', 1000, MAX_DUE_IN_MS, '365 days'));
    }
    if (given(input.assignee_id)) {
      const ok = await repos.users.findById(orgId, input.assignee_id);
      if (!ok) problems.push({ field: 'assignee_id', message: 'must be a member of this organisation' });
      else step.assignee_id = input.assignee_id;
    }
  }
  if (problems.length > 0) throw errors.validation(problems);
  return step;
}

export function parseSteps(json: string): WorkflowStepDefinition[] {
  return JSON.parse(json) as WorkflowStepDefinition[];
}

/** How a step reads in a list: "Task: Review the draft", "Wait 2 hours". */
export function describeStep(step: Pick<WorkflowStepDefinition, 'kind' | 'title' | 'duration_ms'>): string {
  switch (step.kind) {
    case 'task':
      return `Task: ${step.title ?? ''}`;
    case 'approval':
      return `Approval: ${step.title ?? ''}`;
    case 'wait':
      return `Wait ${formatStepDuration(step.duration_ms ?? 0)}${step.title ? ` (${step.title})` : ''}`;
  }
}
