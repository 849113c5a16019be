import type { Signal } from './signal.js';

/**
 * One timer that wakes a loop at the earliest moment anyone asked for: arming it for a later time than
 * the one already set does nothing, arming it sooner replaces it. Unref'd, so it never holds the process.
 */
export interface WakeTimer {
  arm(delayMs: number): void;
  clear(): void;
}

export function createWakeTimer(fire: () => void): WakeTimer {
  let timer: NodeJS.Timeout | null = null;
  let timerAt = Infinity;
  return {
    arm(delayMs) {
      const at = Date.now() + delayMs;
      if (timer && timerAt <= at) return;
      if (timer) clearTimeout(timer);
      timerAt = at;
      timer = setTimeout(() => {
        timer = null;
        timerAt = Infinity;
        fire();
      }, delayMs);
      timer.unref?.();
    },
    clear() {
      if (timer) clearTimeout(timer);
      timer = null;
      timerAt = Infinity;
    },
  };
}

/**
 * Runs `work` when kicked, never twice at once: a kick while it runs asks for one more pass after it.
 * `idle()` resolves when no pass is under way (for a clean stop).
 */
export interface CoalescedRunner {
  kick(): void;
  idle(): Promise<void>;
}

export function createCoalescedRunner(work: () => Promise<void>, onError: (err: unknown) => void, stopped: () => boolean): CoalescedRunner {
  let running: Promise<void> | null = null;
  let again = false;
  function kick(): void {
    if (stopped()) return;
    if (running) {
      again = true;
      return;
    }
    again = false;
    running = work()
      .catch(onError)
      .finally(() => {
        running = null;
        if (again) kick();
      });
  }
  return {
    kick,
    async idle() {
      await running;
    },
  };
}

/** A background job: a pass, run when kicked, every poll, and at the moment a pass arms. */
export interface PolledJob {
  kick(): void;
  stop(): Promise<void>;
}

export interface PolledJobContext {
  /** Wakes the job again after `delayMs` (earlier than the poll), at the earliest moment asked. */
  arm(delayMs: number): void;
  stopped(): boolean;
}

/**
 * The shell the worker's jobs share: passes one at a time (createCoalescedRunner), an unref'd poll, a wake
 * timer the pass arms for the next due moment, optionally a signal that wakes it (work committed on any
 * process), and a stop that waits for the pass under way. The first pass starts at once.
 */
export function startPolledJob(
  pass: (job: PolledJobContext) => Promise<void>,
  options: { pollMs: number; onError: (err: unknown) => void; wakeOn?: Signal },
): PolledJob {
  let stopped = false;
  const timer = createWakeTimer(() => runner.kick());
  const context: PolledJobContext = { arm: (delayMs) => !stopped && timer.arm(delayMs), stopped: () => stopped };
  const runner = createCoalescedRunner(() => pass(context), options.onError, () => stopped);
  const unsubscribe = options.wakeOn?.subscribe(runner.kick);
  const poll = setInterval(runner.kick, options.pollMs);
  poll.unref?.();
  runner.kick();
  return {
    kick: runner.kick,
    async stop() {
      stopped = true;
      unsubscribe?.();
      clearInterval(poll);
      timer.clear();
      await runner.idle();
    },
  };
}
