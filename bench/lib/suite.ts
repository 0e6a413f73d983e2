import type { Fixture } from './fixture';
import type { LoadRequest, LoadResult, LoadSettings, MeasureHooks } from './load';
import type { Measurement } from './report';
import type { Teardown } from './teardown';

/** What every benchmark suite gets from bench/run.ts. */
export interface SuiteContext {
  fixture: Fixture;
  /** Register servers and other resources here; run.ts tears them down when the suite ends. */
  teardown: Teardown;
  load: LoadSettings;
  /** Warms up and measures the requests (interleaved, see measureAll); results in request order. */
  measure(requests: LoadRequest[], hooks?: MeasureHooks): Promise<LoadResult[]>;
  log: (line: string) => void;
}

/** A group of related measurements; its rows join the one table bench/run.ts prints. */
export interface Suite {
  name: string;
  /** Printed under the table: what the rows mean and what they leave out. */
  notes: string[];
  run(context: SuiteContext): Promise<Measurement[]>;
}

/** Sends `request` once and returns its status and parsed JSON body (null when not JSON). */
export async function probe(request: LoadRequest): Promise<{ status: number; body: unknown }> {
  const response = await fetch(request.url, {
    method: request.method ?? 'GET',
    headers: request.headers,
    body: request.body,
  });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: null };
  }
}
