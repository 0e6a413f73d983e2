import { randomBytes } from 'node:crypto';

// Random bytes are drawn 4 KiB at a time: one call per id costs more than the rest of the id.
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = 0;

function randomBytesFromPool(): Buffer {
  if (used + 16 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    used = 0;
  }
  used += 16;
  return pool.subarray(used - 16, used);
}

/**
 * A UUIDv7 (RFC 9562): time-ordered, so rows sort by creation and the primary key index stays
 * append-mostly.
 */
export function uuidv7(now = Date.now()): string {
  const bytes = randomBytesFromPool();
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** The id of a request: the client's `X-Request-Id` when it is a sane one, otherwise a new UUIDv7. */
export const requestIdOf = (given: string | string[] | undefined): string =>
  typeof given === 'string' && requestIdPattern.test(given) ? given : uuidv7();

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string): boolean => uuidPattern.test(value);
