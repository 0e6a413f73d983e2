/**
 * `GET /readyz`: whether this process can serve requests now, for load balancers and
 * orchestrators, which stop sending it traffic while the answer is 503. `/healthz` stays the
 * liveness check (the process answers and reaches its database).
 */
import type { FastifyInstance } from 'fastify';

/** By name, what this process needs: a probe that resolves while it is ready and rejects otherwise. */
export type ReadinessProbes = Record<string, () => Promise<void>>;

/** A probe that has not answered by then counts as down: a load balancer's own probe times out soon after. */
export const READINESS_TIMEOUT_MS = 3_000;

async function isUp(probe: () => Promise<void>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), READINESS_TIMEOUT_MS).unref();
  });
  try {
    return await Promise.race([
      probe().then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Answers 200 `{status: 'ready', <name>: 'up', ..., down: []}` when every probe is up, otherwise
 * 503 `{status: 'unavailable', ..., <name>: 'down', down: [<name>, ...]}`. Probes run together.
 */
export function installReadiness(app: FastifyInstance, probes: ReadinessProbes) {
  app.get('/readyz', async (_request, reply) => {
    const states = await Promise.all(
      Object.entries(probes).map(async ([name, probe]) => [name, (await isUp(probe)) ? 'up' : 'down'] as const),
    );
    const down = states.filter(([, state]) => state === 'down').map(([name]) => name);
    return reply
      .status(down.length === 0 ? 200 : 503)
      .send({ status: down.length === 0 ? 'ready' : 'unavailable', ...Object.fromEntries(states), down });
  });
}
