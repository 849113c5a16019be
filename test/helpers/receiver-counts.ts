import type { ServerResponse } from 'node:http';

/**
 * The most of `times` (ms, any order) in any window [t, t + windowMs): with the default, what a receiver
 * counting per second sees.
 */
export function busiestSecond(times: readonly number[], windowMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

/**
 * The network's share of a receiver's count. The sender's starts hold the limit exactly (the tests check the
 * attempts' recorded starts strictly, in every one-second window). Arrivals are what a receiver sees, and on a
 * loaded test machine they bunch: a new TLS connection's handshake, a process waiting for a core. A full CI
 * run has bunched them by 70 ms. So arrival windows are checked this much shorter than a second: still one
 * start too many for a limiter that lets a burst through (at 8/s, a ninth arrival in 750 ms needs nine starts
 * within ~1 s), never a failure for the machine's scheduling alone.
 */
export const ARRIVAL_JITTER_MS = 250;

/**
 * Requests a receiver has open at once. A request counts as closed when its answer is written (no client can
 * send its next request before that, while the `close` event may come later), or when its connection ends
 * first; once either way.
 */
export function inFlightCounter(): { track(res: ServerResponse): number; max(): number } {
  let open = 0;
  let most = 0;
  return {
    /** Counts `res` open until answered; returns how many are open with it. */
    track(res) {
      open++;
      most = Math.max(most, open);
      let closed = false;
      const close = () => {
        if (!closed) open--;
        closed = true;
      };
      res.on('close', close);
      const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
      res.end = ((...a: unknown[]) => (close(), end(...a))) as ServerResponse['end'];
      return open;
    },
    max: () => most,
  };
}
