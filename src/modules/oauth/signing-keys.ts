import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { writeTransaction, type Db } from '../../kernel/db';
import * as repository from './oauth.repository';
import { ACCESS_TOKEN_TTL, ID_TOKEN_TTL } from './tokens';

export const SIGNING_ALGORITHM = 'ES256';

/** How long a process signs with the key it loaded before it looks for a newer one (after a rotation elsewhere). */
export const CURRENT_KEY_RECHECK_MS = 30_000;

/**
 * How long a superseded key keeps verifying: the longest a token it signed lives, after the last
 * process that had it loaded stopped signing with it. (A function: tokens.ts imports this module.)
 */
export const retirementDelayMs = () => Math.max(ACCESS_TOKEN_TTL, ID_TOKEN_TTL) * 1000 + 2 * CURRENT_KEY_RECHECK_MS;

export interface Rotation {
  /** The key new tokens are signed with from now on. */
  kid: string;
  /** The keys it supersedes, each verifying until its `retireAt`. */
  retiring: { kid: string; retireAt: Date }[];
}

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
}

/**
 * The keys that sign access and ID tokens, kept in PostgreSQL so that every process signs and
 * verifies alike. The first is generated on first use; private halves are stored encrypted
 * (AES-256-GCM) under a key derived from the master key, so a database dump alone cannot mint tokens.
 */
export class SigningKeys {
  private readonly encryptionKey: Buffer;
  private current: Promise<SigningKey> | undefined;
  private currentLoadedAt = 0;
  /** Verification keys by kid, each trusted until its retirement or the next recheck, whichever comes first. */
  private readonly publicKeys = new Map<string, { key: CryptoKey; retireAt: number }>();

  constructor(
    private readonly db: Db,
    masterKey: string,
  ) {
    this.encryptionKey = createHmac('sha256', masterKey).update('oauth-signing-keys').digest();
  }

  /** The key new tokens are signed with: the newest, looked up again every `CURRENT_KEY_RECHECK_MS`. */
  signingKey(): Promise<SigningKey> {
    if (this.current === undefined || Date.now() - this.currentLoadedAt > CURRENT_KEY_RECHECK_MS) {
      this.currentLoadedAt = Date.now();
      const loading = this.loadOrCreate(false).catch((error) => {
        if (this.current === loading) this.current = undefined;
        throw error;
      });
      this.current = loading;
    }
    return this.current;
  }

  /**
   * Makes a new key current. The keys it supersedes stay in the JWKS and keep verifying until
   * every token they signed has expired (`retirementDelayMs`); the housekeeping job then
   * deletes them. Other processes switch to the new key within `CURRENT_KEY_RECHECK_MS`.
   */
  async rotate(): Promise<Rotation> {
    const loading = this.loadOrCreate(true);
    this.current = loading;
    this.currentLoadedAt = Date.now();
    const { kid, retiring } = await loading;
    return { kid, retiring: retiring ?? [] };
  }

  /** The public key with this `kid`, or undefined when no such key exists. */
  async verificationKey(kid: string | undefined): Promise<CryptoKey | undefined> {
    if (!kid) return undefined;
    const known = this.publicKeys.get(kid);
    // A known key is looked up again once its retirement may have been scheduled or has passed.
    if (known && known.retireAt > Date.now()) return known.key;
    this.publicKeys.clear();
    for (const row of await repository.listSigningKeys(this.db)) {
      this.publicKeys.set(row.kid, {
        key: (await importJWK(row.publicJwk as JWK, row.algorithm)) as CryptoKey,
        retireAt: Math.min(row.retireAt?.getTime() ?? Infinity, Date.now() + CURRENT_KEY_RECHECK_MS),
      });
    }
    return this.publicKeys.get(kid)?.key;
  }

  /** The JSON Web Key Set of every verification key (RFC 7517). */
  async jwks(): Promise<{ keys: JWK[] }> {
    await this.signingKey();
    const rows = await repository.listSigningKeys(this.db);
    return { keys: rows.map((row) => ({ ...(row.publicJwk as JWK), kid: row.kid, alg: row.algorithm, use: 'sig' })) };
  }

  /**
   * The newest key, or a new one when there is none or the newest was sealed under another master
   * key (after MASTER_KEY changed: tokens signed before stay verifiable, their public keys remain).
   */
  private async loadOrCreate(rotate: boolean): Promise<SigningKey & { retiring?: Rotation['retiring'] }> {
    const { row, privateJwk, retiring } = await writeTransaction(this.db, async (tx) => {
      await repository.lockSigningKeyCreation(tx);
      const existing = await repository.newestSigningKey(tx);
      const opened = existing ? this.open(Buffer.from(existing.privateKeyEncrypted)) : null;
      if (existing && opened && !rotate) return { row: existing, privateJwk: opened, retiring: undefined };
      const retired = rotate
        ? await repository.retireSigningKeys(tx, new Date(Date.now() + retirementDelayMs()))
        : undefined;
      const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
      const publicJwk = await exportJWK(publicKey);
      const newPrivateJwk = await exportJWK(privateKey);
      const inserted = await repository.insertSigningKey(tx, {
        kid: await calculateJwkThumbprint(publicJwk),
        algorithm: SIGNING_ALGORITHM,
        publicJwk,
        privateKeyEncrypted: this.encrypt(JSON.stringify(newPrivateJwk)),
      });
      return {
        row: inserted,
        privateJwk: newPrivateJwk,
        retiring: retired?.map(({ kid, retireAt }) => ({ kid, retireAt: retireAt! })),
      };
    });
    this.publicKeys.set(row.kid, {
      key: (await importJWK(row.publicJwk as JWK, row.algorithm)) as CryptoKey,
      retireAt: Date.now() + CURRENT_KEY_RECHECK_MS,
    });
    return { kid: row.kid, privateKey: (await importJWK(privateJwk, row.algorithm)) as CryptoKey, retiring };
  }

  /** The private JWK sealed in a row, or null when it was sealed under another master key. */
  private open(sealed: Buffer): JWK | null {
    try {
      return JSON.parse(this.decrypt(sealed)) as JWK;
    } catch {
      return null;
    }
  }

  /** `iv (12) || tag (16) || ciphertext`. */
  private encrypt(plaintext: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encryptionKey, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
  }

  private decrypt(sealed: Buffer): string {
    const decipher = createDecipheriv('aes-256-gcm', this.encryptionKey, sealed.subarray(0, 12));
    decipher.setAuthTag(sealed.subarray(12, 28));
    return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
  }
}
