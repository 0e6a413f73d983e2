// autocannon ships no type declarations and @types/autocannon is not a dependency: this declares
// the small part of its programmatic API the benchmarks use.
declare module 'autocannon' {
  export interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    /** Seconds. */
    duration?: number;
    pipelining?: number;
    /** Worker threads firing the requests (0: the calling thread). */
    workers?: number;
    /** Seconds before a request counts as timed out. */
    timeout?: number;
    title?: string;
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
  }

  export interface Result {
    title?: string;
    url: string;
    connections: number;
    /** Seconds the run lasted. */
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    statusCodeStats: Record<string, { count: number }>;
    /** Milliseconds. */
    latency: Histogram & { totalCount: number };
    /** Requests per second (total: completed requests). */
    requests: Histogram & { sent: number };
    /** Bytes per second. */
    throughput: Histogram;
  }

  /** An event emitter that is also a thenable of the result (when no callback is given). */
  export interface Instance extends PromiseLike<Result> {
    stop(): void;
  }

  function autocannon(options: Options): Instance;
  export default autocannon;
}
