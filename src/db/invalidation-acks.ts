/**
 * The publisher's side of an acknowledged invalidation (Redis pub/sub and PostgreSQL LISTEN/NOTIFY alike):
 * each published message waits until as many receivers as the channel counted have answered on the
 * publisher's ack channel, or a timeout passes.
 */
export interface AckWait {
  /**
   * Resolves once `expected` answers arrived, or after `timeoutMs` (or at shutdown), with how many did;
   * then forgets the message.
   */
  wait(expected: number, timeoutMs: number): Promise<number>;
  /** Forgets the message without waiting (the publish failed, or nothing is to be awaited). */
  cancel(): void;
  /** Whether answers to the message are being collected (false once cancelled or closed). */
  readonly tracked: boolean;
}

export interface Acks {
  /** Starts collecting answers to `msg` (only while the ack channel is up: otherwise none can arrive). */
  open(msg: string, collect: boolean): AckWait;
  /** An answer to `msg` arrived on the ack channel. */
  received(msg: string): void;
  /** Ends every wait at once (shutdown). */
  releaseAll(): void;
}

interface Entry {
  expected: number | null;
  received: number;
  done: () => void;
}

export function createAcks(): Acks {
  const pending = new Map<string, Entry>();
  return {
    open(msg, collect) {
      let done!: () => void;
      const finished = new Promise<void>((resolve) => (done = resolve));
      const entry: Entry = { expected: null, received: 0, done };
      if (collect) pending.set(msg, entry);
      return {
        get tracked() {
          return pending.get(msg) === entry;
        },
        cancel: () => void pending.delete(msg),
        async wait(expected, timeoutMs) {
          entry.expected = expected;
          try {
            if (entry.received >= expected) return entry.received;
            let timer: NodeJS.Timeout | undefined;
            await Promise.race([finished, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
            clearTimeout(timer);
            return entry.received;
          } finally {
            pending.delete(msg);
          }
        },
      };
    },
    received(msg) {
      const entry = pending.get(msg);
      if (!entry) return;
      entry.received++;
      if (entry.expected !== null && entry.received >= entry.expected) entry.done();
    },
    releaseAll() {
      for (const entry of pending.values()) entry.done();
    },
  };
}

/** Callers that wait, at most a given time, for a channel to come up. */
export function createReadiness() {
  let waiters: (() => void)[] = [];
  return {
    wait(ready: boolean, ms: number): Promise<void> {
      if (ready) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(resolve, ms);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    /** The channel is up (or closing): every waiter goes on. */
    release(): void {
      const current = waiters;
      waiters = [];
      for (const waiter of current) waiter();
    },
  };
}
