import { randomBytes } from 'node:crypto';

// Random bytes are drawn 4 KiB at a time: one call per id costs more than the rest of the id.
const POOL_BYTES = 4096;
/** Random bits of an id after its version and variant: 74, in 10 bytes. */
const RANDOM_BYTES = 10;
let pool = Buffer.alloc(0);
let used = 0;

/** Two hex digits per byte value, and one per nibble: an id is joined from these, not from a Buffer's hex. */
const HEX_BYTE = Array.from({ length: 256 }, (_, value) => value.toString(16).padStart(2, '0'));
const HEX_NIBBLE = Array.from({ length: 16 }, (_, value) => value.toString(16));

/** `xxxxxxxx-xxxx-7` of the last millisecond an id was made in: ids of one millisecond share it. */
let timePartOf = -1;
let timePart = '';

/**
 * A UUIDv7 (RFC 9562): time-ordered, so rows sort by creation and the primary key index stays
 * append-mostly. It is made on every request (its id) as well as for rows, so it is joined from
 * lookup tables: a Buffer and its hex form cost more than the rest of a cached hit.
 */
export function uuidv7(now = Date.now()): string {
  if (now !== timePartOf) {
    const hex = now.toString(16).padStart(12, '0');
    timePart = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7`;
    timePartOf = now;
  }
  if (used + RANDOM_BYTES > pool.length) {
    pool = randomBytes(POOL_BYTES);
    used = 0;
  }
  const b = pool;
  const i = used;
  used += RANDOM_BYTES;
  return (
    timePart +
    HEX_NIBBLE[b[i]! & 0x0f]! +
    HEX_BYTE[b[i + 1]!]! +
    '-' +
    HEX_BYTE[(b[i + 2]! & 0x3f) | 0x80]! +
    HEX_BYTE[b[i + 3]!]! +
    '-' +
    HEX_BYTE[b[i + 4]!]! +
    HEX_BYTE[b[i + 5]!]! +
    HEX_BYTE[b[i + 6]!]! +
    HEX_BYTE[b[i + 7]!]! +
    HEX_BYTE[b[i + 8]!]! +
    HEX_BYTE[b[i + 9]!]!
  );
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** The id of a request: the client's `X-Request-Id` when it is a sane one, otherwise a new UUIDv7. */
export const requestIdOf = (given: string | string[] | undefined): string =>
  typeof given === 'string' && requestIdPattern.test(given) ? given : uuidv7();

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string): boolean => uuidPattern.test(value);
