import { describe, expect, it } from 'vitest';
import { isUuid, requestIdOf, uuidv7 } from '../../src/kernel/ids';

describe('uuidv7', () => {
  it('is an RFC 9562 version 7 UUID with its millisecond in the first 48 bits', () => {
    const now = Date.UTC(2026, 10, 27, 3, 20, 0, 123);
    const id = uuidv7(now);
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe('7');
    expect('89ab').toContain(id[19]);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(now);
  });

  it('encodes the earliest and the latest 48-bit millisecond in full', () => {
    expect(uuidv7(0).slice(0, 15)).toBe('00000000-0000-7');
    expect(uuidv7(2 ** 48 - 1).slice(0, 15)).toBe('ffffffff-ffff-7');
  });

  it('sorts by time and repeats no id among many made in the same millisecond', () => {
    const now = Date.now();
    const ids = Array.from({ length: 50_000 }, (_, index) => uuidv7(now + Math.floor(index / 10_000)));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.map((id) => id.slice(0, 13))).toEqual([...ids.map((id) => id.slice(0, 13))].sort());
    // Random bits vary in every position after the version, not only in some.
    for (const position of [15, 16, 17, 20, 21, 22, 24, 30, 35]) {
      expect(new Set(ids.map((id) => id[position])).size).toBeGreaterThan(3);
    }
  });
});

describe('requestIdOf', () => {
  it("keeps a client's sane X-Request-Id and makes a UUIDv7 otherwise", () => {
    expect(requestIdOf('order-42:retry.1')).toBe('order-42:retry.1');
    expect(isUuid(requestIdOf(undefined))).toBe(true);
    expect(isUuid(requestIdOf('with space'))).toBe(true);
    expect(isUuid(requestIdOf(['a', 'b']))).toBe(true);
    expect(isUuid(requestIdOf('x'.repeat(129)))).toBe(true);
  });
});
