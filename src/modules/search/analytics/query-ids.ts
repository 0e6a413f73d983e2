/**
 * Query ids: the `query_id` of each search result. Searches are counted per query and hour, not
 * stored one row each, so the id itself carries what an event or a click needs to count with its
 * search: when it was made and a key of its query. It is a UUID (version 8, RFC 9562), as the API
 * has always promised, and signed with HMAC-SHA256 over the index it searched, so that an id cannot
 * be made up or moved to another index: an event is stored only for an id this deployment issued.
 *
 * The 122 bits a version 8 UUID leaves free, most significant first:
 *
 *   32  Unix seconds of the search (until 2106)
 *   16  random, so that two searches of one query in one second have different ids
 *   40  query key: the first 40 bits of the SHA-256 of the normalised query
 *   34  signature: the first 34 bits of HMAC-SHA256(index id, the 88 bits above)
 *
 * Events find their search's counts by (index, hour, query key). Two different queries of one
 * index whose keys collide in the same hour (odds about n²/2^41 for n distinct queries that hour)
 * would share their events in the per-query figures; the totals are unaffected.
 */
import { createHash, createHmac, createSecretKey, randomInt, timingSafeEqual } from 'node:crypto';
import { isUuid } from '../../../kernel/ids';

/** What a query id tells about its search. */
export interface SearchReference {
  /** When the search was made, in Unix seconds. */
  searchedAt: number;
  /** The first 40 bits of the SHA-256 of the normalised query. */
  queryKey: number;
}

export interface QueryIdCodec {
  /** A new id for a search of `indexId`. */
  issue(indexId: string, search: SearchReference): string;
  /** The search an id names when this codec issued it for one of `indexIds`, with that index; otherwise null. */
  verify(id: string, indexIds: Iterable<string>): (SearchReference & { indexId: string }) | null;
  /** The search an id names, without checking its signature: for ids inside an already verified click code. */
  read(id: string): SearchReference | null;
}

export const HOUR_MS = 3_600_000;

/** The hour (UTC) the searches made at `searchedAt` (Unix seconds) are counted in. */
export const hourOf = (searchedAt: number) => new Date(Math.floor(searchedAt / 3600) * HOUR_MS);

/**
 * The key of a normalised query. The migration that introduced query ids computes the same value in
 * SQL (`('x' || left(encode(sha256(convert_to(query, 'UTF8')), 'hex'), 10))::bit(40)::bigint`).
 */
export const queryKeyOf = (query: string) => createHash('sha256').update(query, 'utf8').digest().readUIntBE(0, 5);

const SIGNATURE_BITS = 34n;
const KEY_BITS = 40n;
const RANDOM_BITS = 16n;
const mask = (bits: bigint) => (1n << bits) - 1n;

/** Places 122 free bits around the version (8) and variant (0b10) bits of a UUID. */
function toUuid(free: bigint): string {
  const uuid = ((free >> 74n) << 80n) | (0x8n << 76n) | (((free >> 62n) & mask(12n)) << 64n) | (0x2n << 62n);
  const hex = (uuid | (free & mask(62n))).toString(16).padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The 122 free bits of a version 8 UUID, or null for any other string. */
function freeBitsOf(id: string): bigint | null {
  if (!isUuid(id)) return null;
  const uuid = BigInt(`0x${id.replaceAll('-', '')}`);
  if (((uuid >> 76n) & 0xfn) !== 0x8n || ((uuid >> 62n) & 0x3n) !== 0x2n) return null;
  return ((uuid >> 80n) << 74n) | (((uuid >> 64n) & mask(12n)) << 62n) | (uuid & mask(62n));
}

const referenceOf = (free: bigint): SearchReference => ({
  searchedAt: Number(free >> (SIGNATURE_BITS + KEY_BITS + RANDOM_BITS)),
  queryKey: Number((free >> SIGNATURE_BITS) & mask(KEY_BITS)),
});

export function createQueryIdCodec(secret: Buffer): QueryIdCodec {
  // A key object is imported once, not on every signature (every result of every search is signed).
  const key = createSecretKey(secret);
  /** The signature of the 88 bits before it, as 5 bytes whose last 6 bits are zero. */
  const sign = (indexId: string, body: bigint) => {
    const bytes = Buffer.alloc(27);
    bytes.write(indexId.replaceAll('-', ''), 0, 16, 'hex');
    bytes.writeBigUInt64BE(body >> 24n, 16);
    bytes.writeUIntBE(Number(body & mask(24n)), 24, 3);
    const signature = createHmac('sha256', key).update(bytes).digest().subarray(0, 5);
    signature[4] = signature[4]! & 0xc0;
    return signature;
  };
  const signatureBytes = (free: bigint) => {
    const bytes = Buffer.alloc(5);
    bytes.writeUIntBE(Number((free & mask(SIGNATURE_BITS)) << 6n), 0, 5);
    return bytes;
  };
  return {
    issue(indexId, { searchedAt, queryKey }) {
      const body =
        (BigInt(searchedAt) << (KEY_BITS + RANDOM_BITS)) | (BigInt(randomInt(0x10000)) << KEY_BITS) | BigInt(queryKey);
      const signature = BigInt(sign(indexId, body).readUIntBE(0, 5)) >> 6n;
      return toUuid((body << SIGNATURE_BITS) | signature);
    },
    verify(id, indexIds) {
      const free = freeBitsOf(id.toLowerCase());
      if (free === null) return null;
      const given = signatureBytes(free);
      for (const indexId of indexIds) {
        if (timingSafeEqual(sign(indexId, free >> SIGNATURE_BITS), given)) return { ...referenceOf(free), indexId };
      }
      return null;
    },
    read(id) {
      const free = freeBitsOf(id.toLowerCase());
      return free === null ? null : referenceOf(free);
    },
  };
}
