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
