import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LevelMethod = (...args: unknown[]) => void;

/**
 * Fastify gives every request a child logger carrying its request id; pino builds that child (its
 * bindings serialised to JSON) whether or not the request ever logs. At `warn` nearly no request logs,
 * so the child here is built on the first call that would actually write a line, with the same bindings
 * and options Fastify asked for. Calls below the logger's level cost one level check.
 *
 * A class, so that a request pays for one small object: the methods live on the prototype rather than
 * being closures made per request (measured on GET by id, docs/benchmarks.md, issue 29).
 */
class LazyChildLogger {
  private built: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private real(): FastifyBaseLogger {
    return (this.built ??= this.parent.child(this.bindings, this.options));
  }

  /** For the level methods below the class. */
  write(level: Level, args: unknown[]): void {
    if (!this.built && !this.isLevelEnabled(level)) return;
    (this.real()[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return this.built ? this.built.level : this.parent.level;
  }

  set level(value: string) {
    this.real().level = value;
  }

  isLevelEnabled(level: string): boolean {
    // Without pino's level check (a custom logger), every call goes to the real child.
    const check = (this.parent as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
    return check ? check.call(this.parent, level) : true;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }

  silent(): void {}
  declare fatal: LevelMethod;
  declare error: LevelMethod;
  declare warn: LevelMethod;
  declare info: LevelMethod;
  declare debug: LevelMethod;
  declare trace: LevelMethod;
}

// The six level methods, on the prototype: each writes through the lazily built child.
for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const) {
  LazyChildLogger.prototype[level] = function (this: LazyChildLogger, ...args: unknown[]): void {
    this.write(level, args);
  };
}

export function lazyChildLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  // A route with its own level (e.g. the docs at warn) needs the real child to apply it.
  if (options.level !== undefined) return parent.child(bindings, options);
  return new LazyChildLogger(parent, bindings, options) as unknown as FastifyBaseLogger;
}
