import { isValidElement, type ComponentChildren } from 'preact';
import { countOf } from '../../lib/text.js';
import { DAY_MS, formatDay, formatUtc, relativeTime } from '../../lib/time.js';
import { currentFormOrigin } from '../render.js';

/** A problem to show: at the top of the page (role="alert") and, when it names a field, beside that field. */
export interface FormError {
  /** The `id` of the field it belongs to, or null for the whole form. */
  field: string | null;
  message: string;
}

export function errorFor(errors: readonly FormError[] | undefined, field: string): string | undefined {
  return errors?.find((e) => e.field === field)?.message;
}

/** Every error of the page, listed first and announced; each links to its field. */
export function ErrorSummary({ errors }: { errors?: readonly FormError[] | undefined }) {
  if (!errors || errors.length === 0) return null;
  return (
    <div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex={-1}>
      <h2 id="error-summary-title">There is a problem</h2>
      <ul>
        {errors.map((e) => (
          <li>{e.field ? <a href={`#${e.field}`}>{e.message}</a> : e.message}</li>
        ))}
      </ul>
    </div>
  );
}

/** A confirmation or result, announced politely. */
export function Notice({ children }: { children?: ComponentChildren }) {
  if (!children) return null;
  return (
    <div class="notice" role="status">
      {children}
    </div>
  );
}

/** The form's CSRF token, and the page it is on (where a refusal brings the reader back to). */
export function CsrfField({ token }: { token: string }) {
  const from = currentFormOrigin();
  return (
    <>
      <input type="hidden" name="_csrf" value={token} />
      {from ? <input type="hidden" name="_from" value={from} /> : null}
    </>
  );
}

/** The ids a field's description and error are known by, for `aria-describedby`. */
function describedBy(id: string, hint: string | undefined, error: string | undefined): string | undefined {
  return [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(' ') || undefined;
}

/** Label, hint and error around one control, the same for every kind of field. */
export function FieldShell({ id, label, hint, error, children }: { id: string; label: string; hint?: string | undefined; error?: string | undefined; children: ComponentChildren }) {
  return (
    <div class={error ? 'field field-error' : 'field'}>
      <label for={id}>{label}</label>
      {hint ? <p class="hint" id={`${id}-hint`}>{hint}</p> : null}
      {error ? <p class="error-message" id={`${id}-error`}>{error}</p> : null}
      {children}
    </div>
  );
}

interface FieldProps {
  id: string;
  name?: string;
  label: string;
  type?: 'text' | 'email' | 'password' | 'datetime-local' | 'date' | 'search' | 'url';
  value?: string | null | undefined;
  error?: string | undefined;
  hint?: string;
  required?: boolean;
  autocomplete?: string;
  maxLength?: number;
  readOnly?: boolean;
  autofocus?: boolean;
}

/** A labelled input; an error is tied to it with aria-describedby and aria-invalid. */
export function Field({ id, name = id, label, type = 'text', value, error, hint, required, autocomplete, maxLength, readOnly, autofocus }: FieldProps) {
  return (
    <FieldShell id={id} label={label} hint={hint} error={error}>
      <input
        id={id}
        name={name}
        // The union is fine at run time; preact's types pair each input type with its own attributes.
        type={type as 'text'}
        value={value ?? undefined}
        required={required}
        autocomplete={autocomplete}
        maxLength={maxLength}
        readOnly={readOnly}
        autofocus={autofocus}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy(id, hint, error)}
      />
    </FieldShell>
  );
}

interface SelectProps {
  id: string;
  name?: string;
  label: string;
  options: readonly { value: string; label: string }[];
  value?: string | undefined;
  error?: string | undefined;
  /** Visually hidden label (a select in a table row, named by its column). */
  hiddenLabel?: boolean;
}

export function Select({ id, name = id, label, options, value, error, hiddenLabel }: SelectProps) {
  return (
    <div class={error ? 'field field-error' : 'field'}>
      <label for={id} class={hiddenLabel ? 'visually-hidden' : undefined}>
        {label}
      </label>
      {error ? <p class="error-message" id={`${id}-error`}>{error}</p> : null}
      <select id={id} name={name} aria-invalid={error ? 'true' : undefined} aria-describedby={error ? `${id}-error` : undefined}>
        {options.map((o) => (
          <option value={o.value} selected={o.value === value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

interface RadioGroupProps {
  /** The group's accessible name (the fieldset's legend). */
  legend: string;
  name: string;
  options: readonly { value: string; label: string }[];
  value?: string | undefined;
  error?: string | undefined;
  inline?: boolean;
}

export function RadioGroup({ legend, name, options, value, error, inline }: RadioGroupProps) {
  return (
    <fieldset class={inline ? 'radios inline' : 'radios'} id={name} aria-invalid={error ? 'true' : undefined} aria-describedby={error ? `${name}-error` : undefined}>
      <legend>{legend}</legend>
      {error ? <p class="error-message" id={`${name}-error`}>{error}</p> : null}
      {options.map((o) => (
        <label class="radio">
          <input type="radio" name={name} value={o.value} checked={o.value === value} /> {o.label}
        </label>
      ))}
    </fieldset>
  );
}

/** A form holding one action button: POST with the CSRF token and hidden values. */
export function ActionForm({
  action,
  csrf,
  label,
  hidden,
  danger,
  secondary,
  ariaLabel,
  disabled,
  children,
}: {
  action: string;
  csrf: string;
  label: string;
  hidden?: Record<string, string>;
  danger?: boolean;
  secondary?: boolean;
  /** A fuller name where the label alone is ambiguous in a table ("Move up": which step). */
  ariaLabel?: string;
  /** Shown but not usable now; the page says why beside it. */
  disabled?: boolean;
  children?: ComponentChildren;
}) {
  return (
    <form method="post" action={action} class="inline-form">
      <CsrfField token={csrf} />
      {Object.entries(hidden ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      {children}
      <button type="submit" class={danger ? 'button danger-outline' : secondary ? 'button secondary' : 'button'} aria-label={ariaLabel} disabled={disabled}>
        {label}
      </button>
    </form>
  );
}

/**
 * A create form behind its "New …" summary, so the list it adds to comes first; open when its form was
 * refused (the errors are inside). A native `<details>`: keyboard and screen readers know it, no script.
 */
export function Disclosure({ summary, open, children }: { summary: string; open?: boolean; children?: ComponentChildren }) {
  const id = `${summary.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-summary`;
  // A region named by its summary, so the form is found by its name, open or not.
  return (
    <section class="disclosure-region" aria-labelledby={id}>
      <details class="disclosure panel" open={open}>
        <summary id={id}>{summary}</summary>
        {children}
      </details>
    </section>
  );
}

/**
 * On a phone a row is a card (dashboard.css): each cell shows its column's name, from `data-label`. The cells
 * are labelled here, once for every table, so no page writes a label twice. The row's vnodes were made for this
 * render alone, so their props are labelled in place: cloning every cell cost the projects page half again.
 */
function labelCells(rows: ComponentChildren, headers: readonly string[]): void {
  if (Array.isArray(rows)) {
    for (const row of rows) labelCells(row as ComponentChildren, headers);
    return;
  }
  if (!isValidElement(rows) || rows.type !== 'tr') return;
  labelRow((rows.props as { children?: ComponentChildren }).children, headers, { column: 0 });
}

function labelRow(cells: ComponentChildren, headers: readonly string[], at: { column: number }): void {
  if (Array.isArray(cells)) {
    for (const cell of cells) labelRow(cell as ComponentChildren, headers, at);
    return;
  }
  if (!isValidElement(cells) || (cells.type !== 'td' && cells.type !== 'th')) return;
  const props = cells.props as { colSpan?: number; 'data-label'?: string };
  const label = headers[at.column];
  at.column += props.colSpan ?? 1;
  if (label && props['data-label'] === undefined) props['data-label'] = label;
}

/**
 * A table named by its caption (the contract's name). `captionHidden` where the caption would only repeat
 * the page's heading: still the table's accessible name, not a second heading on screen.
 */
export function Table({ caption, headers, children, empty, captionHidden, kind }: { caption: string; headers: readonly string[]; children?: ComponentChildren; empty?: string; captionHidden?: boolean; kind?: string }) {
  const rows = Array.isArray(children) ? children.length : children ? 1 : 0;
  if (rows > 0) labelCells(children, headers);
  return (
    <div class={kind ? `table-wrap ${kind}` : 'table-wrap'}>
      <table>
        <caption class={captionHidden ? 'visually-hidden' : undefined}>{caption}</caption>
        <thead>
          <tr>
            {headers.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows === 0 ? (
            <tr>
              <td colSpan={headers.length} class="empty">
                {empty ?? 'Nothing here yet.'}
              </td>
            </tr>
          ) : (
            children
          )}
        </tbody>
      </table>
    </div>
  );
}

/**
 * Every time a person reads (DASHBOARD 1): "25 Nov 2026, 13:44 UTC" (to the second where attempts are
 * seconds apart), with "(3 minutes ago)" under it within a day, the ISO value for machines.
 */
export function Time({ iso, seconds, absolute, never = 'never' }: { iso: string | null | undefined; seconds?: boolean; absolute?: boolean; never?: string }) {
  if (!iso) return <span class="muted">{never}</span>;
  const ms = Date.parse(iso);
  const exact = formatUtc(ms, { seconds: true });
  // A table of hours (a chart's data) reads best as times; "3 hours ago" suits a single event.
  const relative = absolute ? null : relativeTime(ms, Date.now());
  const time = (
    <time dateTime={iso} title={exact}>
      {seconds ? exact : `${exact.slice(0, -7)} UTC`}
    </time>
  );
  // Both on the page (DASHBOARD 1): the exact time, and how long ago under it; a hover title is no help on a phone.
  if (!relative) return time;
  return (
    <>
      {time}
      <span class="relative"> ({relative})</span>
    </>
  );
}

/**
 * A due date as people read it (DASHBOARD 1): the day (or the time, for a run's "due in"), how far off in
 * words on the page (not in a hover title), and an open task past it flagged "Overdue by N days".
 */
export function Due({ iso, open }: { iso: string | null; open: boolean }) {
  if (!iso) return <span class="muted">No due date</span>;
  const ms = Date.parse(iso);
  const now = Date.now();
  const at = new Date(ms);
  const endOfDay = at.getUTCHours() === 23 && at.getUTCMinutes() === 59;
  const days = Math.floor(ms / DAY_MS) - Math.floor(now / DAY_MS);
  const when = <time dateTime={iso}>{endOfDay ? formatDay(ms) : formatUtc(ms)}</time>;
  if (open && ms < now) {
    return (
      <>
        {when} <strong class="overdue">{days === 0 ? 'Overdue (due today)' : `Overdue by ${countOf(-days, 'day')}`}</strong>
      </>
    );
  }
  if (!open || days > 30) return when;
  return (
    <>
      {when} <span class="muted">({days === 0 ? 'today' : days === 1 ? 'tomorrow' : `in ${days} days`})</span>
    </>
  );
}

/** A calendar day ("25 Nov 2026"): due dates, deletion dates. */
export function Day({ iso }: { iso: string }) {
  return <time dateTime={iso}>{formatDay(Date.parse(iso))}</time>;
}

/** Text cut into pieces a line may break between (`<wbr>`), and nowhere else unless a piece alone is too wide. */
function Breakable({ parts }: { parts: readonly string[] }) {
  return <>{parts.map((part, i) => (i === 0 ? part : [<wbr />, part]))}</>;
}

/** An e-mail address that may wrap only before its "@" or after a dot, never inside a word. */
export function Email({ address }: { address: string }) {
  return <Breakable parts={address.split(/(?=@)|(?<=\.)/)} />;
}

/**
 * A URL that wraps where people expect (DASHBOARD 1: long text wraps only where it must): after a slash, and
 * before a dot, `?`, `&` or `=`; the stylesheet breaks a segment itself only when it alone is wider than the line.
 */
export function Url({ href }: { href: string }) {
  return <Breakable parts={href.split(/(?<=\/)(?!\/)|(?=[.?&=])/)} />;
}

/** A run of characters with no place to wrap, longer than any word people write. */
const UNBROKEN = /[^\s\-/]{31,}/;

/**
 * A name or value in a table cell (DASHBOARD 1, "No word broken in the middle"): cells wrap between words, so a
 * value holding one long unbroken run (a 255-character name) is cut with "…" on one line instead of widening its
 * column or breaking inside the word. The whole text stays in the document (screen readers, find in page), in
 * its hover title, and on the thing's own page.
 */
export function Clipped({ text }: { text: string }) {
  if (!UNBROKEN.test(text)) return <>{text}</>;
  return (
    <span class="clipped" title={text}>
      {text}
    </span>
  );
}

/** The mark of no value ("—") as its entity: measured 17% of the project page's CPU, because one character outside
 * Latin-1 makes V8 build the whole page as a two-byte string, slower to join and to encode. */
const NO_VALUE = { __html: '&mdash;' };

/** An empty cell's dash. */
export function NoValue() {
  return <span class="muted" dangerouslySetInnerHTML={NO_VALUE} />;
}

/** A labelled multi-line text field. */
export function TextArea({ id, name = id, label, value, error, hint, maxLength }: { id: string; name?: string; label: string; value?: string | null | undefined; error?: string | undefined; hint?: string; maxLength?: number }) {
  return (
    <FieldShell id={id} label={label} hint={hint} error={error}>
      <textarea id={id} name={name} rows={3} maxLength={maxLength} aria-invalid={error ? 'true' : undefined} aria-describedby={describedBy(id, hint, error)}>
        {value ?? ''}
      </textarea>
    </FieldShell>
  );
}

/**
 * The buttons of a confirmation step for a destructive action: the action itself (the one solid red button
 * of the product), and a way back named for what it keeps ("Keep the invitation"), never a bare "Cancel"
 * beside a cancelling action.
 */
export function ConfirmActions({ action, csrf, label, cancelHref, cancelLabel }: { action: string; csrf: string; label: string; cancelHref: string; cancelLabel: string }) {
  return (
    <div class="actions">
      <form method="post" action={action} class="inline-form">
        <CsrfField token={csrf} />
        <button type="submit" class="button danger">
          {label}
        </button>
      </form>
      <a href={cancelHref}>{cancelLabel}</a>
    </div>
  );
}

/**
 * DASHBOARD 1, "Danger zone": what deletes or ends something sits in the last section of its page, as GitHub
 * and Vercel place it, outlined rather than solid so the page's own work stays its one primary button. Each
 * item says what happens beside its control; the control leads to a confirmation step.
 */
export function DangerZone({ children }: { children?: ComponentChildren }) {
  return (
    <section class="danger-zone" aria-labelledby="danger-zone-title">
      <h2 id="danger-zone-title">Danger zone</h2>
      {children}
    </section>
  );
}

/** One action of the danger zone: what it does in a sentence, then its control (or why it is not offered). */
export function DangerItem({ title, children, control }: { title: string; children?: ComponentChildren; control: ComponentChildren }) {
  return (
    <div class="danger-item">
      <div>
        <h3>{title}</h3>
        {children ? <p class="hint">{children}</p> : null}
      </div>
      <div class="danger-control">{control}</div>
    </div>
  );
}

/** A link to a confirmation page, styled as the danger zone's outlined button. */
export function DangerLink({ href, label }: { href: string; label: string }) {
  return (
    <a href={href} class="button danger-outline">
      {label}
    </a>
  );
}

