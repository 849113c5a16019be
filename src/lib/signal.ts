/** A wake-up signal: producers call `wake()`, consumers subscribe. In-process; PostgreSQL can relay it. */
export interface Signal {
  wake(): void;
  subscribe(listener: () => void): () => void;
}

export function createSignal(): Signal {
  const listeners = new Set<() => void>();
  return {
    wake() {
      for (const listener of listeners) listener();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
