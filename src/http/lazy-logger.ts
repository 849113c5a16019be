import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
const LEVELS: readonly Level[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

/**
 * Fastify gives every request a child logger carrying its request id; pino builds that child (its
 * bindings serialised to JSON) whether or not the request ever logs. At `warn` nearly no request logs,
 * so the child here is built on the first call that would actually write a line, with the same bindings
 * and options Fastify asked for. Calls below the logger's level cost one level check.
 */
export function lazyChildLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  let child: FastifyBaseLogger | null = null;
  const check = (parent as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.bind(parent);
  // Without pino's level check (a custom logger), every call goes to the real child.
  const enabled = (level: string): boolean => (check ? check(level) : true);
  const real = (): FastifyBaseLogger => (child ??= parent.child(bindings, options));
  // A route with its own level (e.g. the docs at warn) needs the real child to apply it.
  if (options.level !== undefined) return real();

  const logger = {
    get level() {
      return child ? child.level : parent.level;
    },
    set level(value: string) {
      real().level = value;
    },
    silent() {},
    child(childBindings: Bindings, childOptions?: ChildLoggerOptions) {
      return real().child(childBindings, childOptions);
    },
    isLevelEnabled: (level: string) => enabled(level),
  } as Record<string, unknown>;
  for (const level of LEVELS) {
    logger[level] = (...args: unknown[]) => {
      if (!child && !enabled(level)) return;
      (real()[level] as (...a: unknown[]) => void)(...args);
    };
  }
  return logger as unknown as FastifyBaseLogger;
}
