import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// scrypt with N = 2^15, r = 8, p = 1 (32 MiB, tens of milliseconds per guess) and a 16-byte salt
// per user. The parameters are stored with the hash so they can be raised later.
const COST_LOG2 = 15;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(
      password.normalize('NFKC'),
      salt,
      KEY_LENGTH,
      { ...options, maxmem: 256 * options.N! * options.r! },
      (error, key) => (error ? reject(error) : resolve(key)),
    ),
  );
}

/** `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>`, salt and hash in base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N: 2 ** COST_LOG2, r: BLOCK_SIZE, p: PARALLELISM });
  return ['scrypt', COST_LOG2, BLOCK_SIZE, PARALLELISM, salt.toString('base64url'), key.toString('base64url')].join(
    '$',
  );
}

/** Constant-time check of a password against a stored hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, costLog2, blockSize, parallelism, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), {
    N: 2 ** Number(costLog2),
    r: Number(blockSize),
    p: Number(parallelism),
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash no password matches: verified against when the e-mail is unknown, so both cases take as long. */
export const UNKNOWN_USER_HASH = [
  'scrypt',
  COST_LOG2,
  BLOCK_SIZE,
  PARALLELISM,
  Buffer.alloc(16).toString('base64url'),
  Buffer.alloc(KEY_LENGTH).toString('base64url'),
].join('$');
