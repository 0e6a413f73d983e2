/**
 * An address that keeps sending bodies nested too deep gets its refusals late, while its other
 * requests, and everyone else's, are answered as usual.
 */
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/kernel/request-limits';
import { HostileSenders } from '../../src/kernel/hostile-senders';
import { createTenant, startTestApp } from '../helpers/app';

const deepBody = (depth: number) => `{"data":${'['.repeat(depth)}${']'.repeat(depth)}}`;

describe('an address that keeps sending bodies nested too deep', () => {
  it('gets its refusals after the free ones late, and its other requests at once; nothing is written', async () => {
    const t = await startTestApp({ env: { REFUSED_BODY_HOLD_MS: '3000' } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const tenant = await createTenant(t.rest, 'Loop');
    const post = (body: string) =>
      fetch(`${base}/api/storage/edge/proxies`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        body,
      });

    for (let index = 0; index < 10; index++) {
      const refused = await post(deepBody(100_000));
      expect(refused.status).toBe(400);
      // The rest of the body is not read: the connection ends with the answer.
      expect(refused.headers.get('connection')).toBe('close');
      expect(((await refused.json()) as { error: { details: { field: string }[] } }).error.details[0]!.field).toBe(
        'body',
      );
    }

    const order: string[] = [];
    const held = post(deepBody(MAX_JSON_DEPTH + 1)).then(async (response) => {
      order.push('held refusal');
      return response;
    });
    const health = await fetch(`${base}/healthz`);
    order.push('health');
    const created = await post(
      JSON.stringify({ data: { key: 'after', routes: { path: '*', origin: { uri: 'https://shop.example.com' } } } }),
    );
    order.push('valid body');
    expect(health.status).toBe(200);
    expect(created.status).toBe(201);
    const refusal = await held;
    expect(refusal.status).toBe(400);
    expect(order).toEqual(['health', 'valid body', 'held refusal']);

    const listed = await fetch(`${base}/api/storage/edge/proxies`, {
      headers: { authorization: `Bearer ${tenant.key}` },
    });
    expect(((await listed.json()) as { data: { key: string }[] }).data.map((proxy) => proxy.key)).toEqual(['after']);
  });
});

describe('HostileSenders', () => {
  const options = { freeRefusals: 2, windowMs: 60_000, holdMs: 50, maxHeld: 2, maxAddresses: 100 };
  const answered = (senders: HostileSenders, address: string) =>
    new Promise<'now' | 'later'>((resolve) => {
      let synchronous = true;
      senders.refused(address, () => resolve(synchronous ? 'now' : 'later'));
      synchronous = false;
    });

  it('answers the free refusals of an address at once, then holds each further one', async () => {
    const senders = new HostileSenders(options);
    expect(await answered(senders, '203.0.113.7')).toBe('now');
    expect(await answered(senders, '203.0.113.7')).toBe('now');
    expect(await answered(senders, '203.0.113.7')).toBe('later');
    // Another address has free refusals of its own; an IPv6 /64 counts as one address.
    expect(await answered(senders, '203.0.113.8')).toBe('now');
    expect(await answered(senders, '2001:db8::1')).toBe('now');
    expect(await answered(senders, '2001:db8::2')).toBe('now');
    expect(await answered(senders, '2001:db8::3')).toBe('later');
  });

  it('holds at most maxHeld answers at once, and none with holdMs 0', async () => {
    const senders = new HostileSenders(options);
    for (let index = 0; index < 2; index++) await answered(senders, '198.51.100.1');
    const waiting = [answered(senders, '198.51.100.1'), answered(senders, '198.51.100.1')];
    expect(senders.holding).toBe(2);
    expect(await answered(senders, '198.51.100.1')).toBe('now');
    expect(await Promise.all(waiting)).toEqual(['later', 'later']);
    expect(senders.holding).toBe(0);

    const never = new HostileSenders({ ...options, holdMs: 0 });
    for (let index = 0; index < 5; index++) expect(await answered(never, '198.51.100.2')).toBe('now');
  });

  it('forgets an address once its window is over', async () => {
    const senders = new HostileSenders({ ...options, windowMs: 30 });
    for (let index = 0; index < 2; index++) await answered(senders, '192.0.2.1');
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await answered(senders, '192.0.2.1')).toBe('now');
  });
});
