/**
 * The reconnect schedule of a long-lived connection (the LISTEN connections of pg-notify.ts and
 * pg-auth-events.ts): one pending attempt at a time, the delay doubling from 250 ms to 5 s, back to the
 * start once a connection holds. The timer never keeps the process alive.
 */
export interface Reconnect {
  /** Plans one attempt after the current delay, unless one is already planned or `cancel` was called. */
  schedule(): void;
  /** The connection holds: the next loss waits the shortest delay again. */
  succeeded(): void;
  /** For good (closing): drops a planned attempt and plans no other. */
  cancel(): void;
}

const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5000;

export function reconnectSchedule(connect: () => void): Reconnect {
  let delay = FIRST_DELAY_MS;
  let timer: NodeJS.Timeout | null = null;
  let cancelled = false;
  return {
    schedule() {
      if (cancelled || timer) return;
      timer = setTimeout(() => {
        timer = null;
        connect();
      }, delay);
      timer.unref();
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    },
    succeeded() {
      delay = FIRST_DELAY_MS;
    },
    cancel() {
      cancelled = true;
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
