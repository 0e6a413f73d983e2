/**
 * The notification listener proves it hears: a notification sent through the pool must come back
 * on it at start, and while running; when one does not, what could be stale is dropped and the
 * listener connects again. (Through a real transaction pooler: `scale.pgbouncer.test.ts`.)
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DatabaseNotifications, NotificationsNotHeard } from '../../src/kernel/database-notifications';
import { createTestDatabase } from '../helpers/db';

const databaseUrl = await createTestDatabase();
const sender = new pg.Pool({ connectionString: databaseUrl, max: 2 });
afterAll(() => sender.end());
const sendThroughPool = async (channel: string, payload: string) => {
  await sender.query('SELECT pg_notify($1, $2)', [channel, payload]);
};

describe('a listener that must hear', () => {
  it('starts when a notification sent through the pool comes back, and keeps hearing', async () => {
    const errors: unknown[] = [];
    const listener = new DatabaseNotifications(
      { connectionString: databaseUrl },
      (error) => errors.push(error),
      undefined,
      {
        send: sendThroughPool,
        watchIntervalMs: 0,
      },
    );
    await listener.start();
    expect(await listener.hears()).toBe(true);
    await listener.stop();
    expect(errors).toEqual([]);
  });

  it('refuses to start when what is sent never arrives', async () => {
    const listener = new DatabaseNotifications({ connectionString: databaseUrl }, () => {}, undefined, {
      // As a transaction pooler does: the notification goes to a session the listener no longer has.
      send: async (channel, payload) => sendThroughPool(`${channel}_elsewhere`, payload),
      timeoutMs: 200,
    });
    await expect(listener.start()).rejects.toBeInstanceOf(NotificationsNotHeard);
  });

  it('drops what could be stale and reconnects when a running listener goes quiet', async () => {
    let lose = false;
    const errors: string[] = [];
    let dropped = 0;
    const listener = new DatabaseNotifications(
      { connectionString: databaseUrl },
      (error) => errors.push((error as Error).message),
      { initialMs: 10, maxMs: 50 },
      {
        send: async (channel, payload) => (lose ? undefined : sendThroughPool(channel, payload)),
        timeoutMs: 100,
        watchIntervalMs: 150,
      },
    );
    listener.onReconnect(() => (dropped += 1));
    await listener.start();
    const firstPid = listener.backendPid;
    lose = true;
    await expect.poll(() => dropped, { timeout: 3_000 }).toBeGreaterThan(0);
    expect(errors.some((message) => message.includes('went quiet'))).toBe(true);
    // Heard again once notifications arrive: on a new connection.
    lose = false;
    await expect
      .poll(() => listener.backendPid !== undefined && listener.backendPid !== firstPid, { timeout: 3_000 })
      .toBe(true);
    expect(await listener.hears()).toBe(true);
    await listener.stop();
  });
});
