import { isDateOnly } from '../datetime.js';
import { Field } from './components.js';

/**
 * A filter's "From" or "To" as a day picker (`type="date"`, DASHBOARD 8): people pick a day rather than type a
 * time in a set format. A day and time typed into the address (a link from elsewhere) stays a text field
 * holding it, so what is applied is what is shown.
 */
export function DayField({ id, label, value, error, hint }: { id: 'from' | 'to'; label: string; value: string | undefined; error: string | undefined; hint: string }) {
  const asDay = value === undefined || isDateOnly(value);
  return <Field id={id} label={label} type={asDay ? 'date' : 'text'} value={value} error={error} hint={asDay ? hint : `${hint} As typed: a day and a time in UTC.`} autocomplete="off" maxLength={64} />;
}
