/**
 * A CLIENT span for every SQL statement sent inside a traced request or job, made by the pg client
 * of the pool Prisma runs on (a subclass given to pg.Pool, rather than @opentelemetry's pg
 * instrumentation, which patches the CommonJS module and misses an ESM import of it). Statements
 * outside any span (the pollers of the background workers) make none.
 *
 * Every transaction begun inside a span also records the span's `traceparent` as the
 * transaction-local setting `commerce.traceparent`, so that rows written by triggers (the
 * broadcast outbox) keep the trace of the request that caused them.
 */
import { context, SpanKind, trace, type Span } from '@opentelemetry/api';
import {
  ATTR_DB_NAMESPACE,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_RESPONSE_STATUS_CODE,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from '@opentelemetry/semantic-conventions';
import pg from 'pg';
import { activeTracer, recordFailure, traceparentOf } from './spans';

/** The setting a transaction's trace context is kept in (read by column defaults). */
export const TRACEPARENT_SETTING = 'commerce.traceparent';

// As the semantic conventions before 1.26 name them, which trace backends still show best.
const ATTR_DB_SYSTEM = 'db.system';
const ATTR_DB_STATEMENT = 'db.statement';

/** Statements longer than this are cut in the span (parameter values are never part of it). */
export const MAX_STATEMENT_LENGTH = 2_000;

const RECORD_TRACEPARENT = `SELECT set_config('${TRACEPARENT_SETTING}', $1, true)`;

/** The statement's first keyword (`SELECT`, `INSERT`, `BEGIN`, ...): the span's name. */
export function operationOf(text: string): string {
  const match = /^\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*([A-Za-z]+)/.exec(text);
  return match ? match[1]!.toUpperCase() : 'SQL';
}

type QueryArgs = [config: string | { text: string; submit?: unknown }, ...rest: unknown[]];

class TracedClient extends pg.Client {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a promise, a stream, or nothing with a callback
  override query(...args: unknown[]): any {
    const tracer = activeTracer();
    const parent = tracer && trace.getSpan(context.active());
    const [config] = args as QueryArgs;
    if (!parent || (typeof config === 'object' && typeof config.submit === 'function')) return this.send(args);
    const text = typeof config === 'string' ? config : config.text;
    const operation = operationOf(text);
    const span = parent.isRecording()
      ? tracer.startSpan(operation, {
          kind: SpanKind.CLIENT,
          attributes: {
            [ATTR_DB_SYSTEM]: 'postgresql',
            [ATTR_DB_SYSTEM_NAME]: 'postgresql',
            [ATTR_DB_OPERATION_NAME]: operation,
            [ATTR_DB_STATEMENT]: text.length > MAX_STATEMENT_LENGTH ? `${text.slice(0, MAX_STATEMENT_LENGTH)}…` : text,
            [ATTR_DB_NAMESPACE]: this.database,
            [ATTR_SERVER_ADDRESS]: this.host,
            [ATTR_SERVER_PORT]: this.port,
          },
        })
      : undefined;
    const callback = args.at(-1);
    if (typeof callback === 'function') {
      // pg.Pool#query's form: the outcome goes to the callback.
      args[args.length - 1] = (error: Error | null, result: unknown) => {
        end(span, error);
        callback(error, result);
      };
      return this.send(args);
    }
    const done = (this.send(args) as Promise<pg.QueryResult>).then(
      (result) => {
        end(span, null);
        return result;
      },
      (error: unknown) => {
        end(span, error);
        throw error;
      },
    );
    // Prisma begins its transactions with exactly this statement.
    if (text !== 'BEGIN') return done;
    return done.then(async (result) => {
      await this.send([RECORD_TRACEPARENT, [traceparentOf(parent)]]);
      return result;
    });
  }

  /** pg's own query (its overloads take these arguments as they come). */
  private send(args: unknown[]): unknown {
    return (super.query as (...queryArgs: unknown[]) => unknown).apply(this, args);
  }
}

function end(span: Span | undefined, error: unknown): void {
  if (!span) return;
  if (error) {
    recordFailure(span, error);
    // PostgreSQL's SQLSTATE (23505, 40P01, ...) says more than the error's class.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string') span.setAttributes({ [ATTR_DB_RESPONSE_STATUS_CODE]: code, [ATTR_ERROR_TYPE]: code });
  }
  span.end();
}

/**
 * pg.Pool#query waits for a connection through a callback that runs in the context of whatever
 * released one: the callback is bound to the caller's context, so that its statement is traced
 * in the caller's span.
 */
class TracedPool extends pg.Pool {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a promise, or nothing with a callback
  override connect(...args: unknown[]): any {
    const [callback] = args;
    if (typeof callback === 'function') return super.connect(context.bind(context.active(), callback as never));
    return super.connect();
  }
}

/** The pool Prisma runs on: traced when tracing is on as it is made, plain pg.Pool otherwise. */
export function createPool(options: pg.PoolConfig): pg.Pool {
  return activeTracer() ? new TracedPool({ ...options, Client: TracedClient }) : new pg.Pool(options);
}
