import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { uuidv7 } from '../../src/kernel/ids';
import { createQueryIdCodec, hourOf, queryKeyOf } from '../../src/modules/search/analytics/query-ids';

const codec = createQueryIdCodec(Buffer.from('a secret of the deployment, 32 bytes'));
const indexA = '0195f7a0-0000-7000-8000-00000000000a';
const indexB = '0195f7a0-0000-7000-8000-00000000000b';
const search = { searchedAt: 1_795_000_123, queryKey: queryKeyOf('desk lamp') };

describe('query ids', () => {
  it('are UUIDs of version 8 that say when and what was searched, and for which index', () => {
    const id = codec.issue(indexA, search);
    expect(z.uuid().safeParse(id).success).toBe(true);
    expect(id[14]).toBe('8');
    expect(codec.verify(id, [indexB, indexA])).toEqual({ ...search, indexId: indexA });
    expect(codec.verify(id.toUpperCase(), [indexA])).toEqual({ ...search, indexId: indexA });
    expect(codec.read(id)).toEqual(search);
  });

  it('differ between searches of one query in one second', () => {
    const ids = new Set(Array.from({ length: 200 }, () => codec.issue(indexA, search)));
    expect(ids.size).toBeGreaterThan(195);
  });

  it('hold the extremes of their fields', () => {
    for (const reference of [
      { searchedAt: 0, queryKey: 0 },
      { searchedAt: 2 ** 32 - 1, queryKey: 2 ** 40 - 1 },
    ]) {
      expect(codec.verify(codec.issue(indexB, reference), [indexB])).toEqual({ ...reference, indexId: indexB });
    }
  });

  it('are refused for another index, another secret, or any edited bit', () => {
    const id = codec.issue(indexA, search);
    expect(codec.verify(id, [indexB])).toBeNull();
    expect(codec.verify(id, [])).toBeNull();
    expect(createQueryIdCodec(Buffer.from('another deployment')).verify(id, [indexA])).toBeNull();
    const hex = id.replaceAll('-', '');
    for (let bit = 0; bit < 128; bit++) {
      const flipped = (BigInt(`0x${hex}`) ^ (1n << BigInt(bit))).toString(16).padStart(32, '0');
      const edited = `${flipped.slice(0, 8)}-${flipped.slice(8, 12)}-${flipped.slice(12, 16)}-${flipped.slice(16, 20)}-${flipped.slice(20)}`;
      expect(codec.verify(edited, [indexA]), `bit ${bit}`).toBeNull();
    }
  });

  it('are not made of any other UUID or string', () => {
    for (const id of [uuidv7(), '00000000-0000-0000-0000-000000000000', 'not-a-uuid', '']) {
      expect(codec.verify(id, [indexA])).toBeNull();
      expect(codec.read(id)).toBeNull();
    }
  });

  it('key a query by the first 40 bits of its SHA-256, and count it in its UTC hour', () => {
    expect(queryKeyOf('lamp')).toBe(865_679_569_481);
    expect(queryKeyOf('ünï 😀')).toBe(createHash('sha256').update('ünï 😀').digest().readUIntBE(0, 5));
    expect(hourOf(search.searchedAt).toISOString()).toBe('2026-11-18T11:00:00.000Z');
  });
});
