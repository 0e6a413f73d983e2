import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { writeTransaction, type Db } from '../../kernel/db';
import * as repository from './oauth.repository';
import { CURRENT_KEY_RECHECK_MS, RETIREMENT_DELAY_MS, SIGNING_ALGORITHM } from './oauth.constants';

export interface Rotation {
  /** The key new tokens are signed with from `signsFrom` on; published in the JWKS at once. */
  kid: string;
  signsFrom: Date;
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
  /** When a published key starts signing: the current choice is made again then, whatever its age. */
  private nextStart = Infinity;
  /** Verification keys by kid, each trusted until its retirement or the next recheck, whichever comes first. */
  private readonly publicKeys = new Map<string, { key: CryptoKey; retireAt: number }>();

  constructor(
    private readonly db: Db,
    masterKey: string,
    /** How long a rotated-in key is published before it signs: the JWKS cache lifetime. */
    private readonly publishAheadMs = 0,
  ) {
    this.encryptionKey = createHmac('sha256', masterKey).update('oauth-signing-keys').digest();
  }

  /**
   * The key new tokens are signed with: the latest that has started signing, looked up again
   * every `CURRENT_KEY_RECHECK_MS` and when a published key's start comes.
   */
  signingKey(): Promise<SigningKey> {
    const now = Date.now();
    if (this.current === undefined || now - this.currentLoadedAt > CURRENT_KEY_RECHECK_MS || now >= this.nextStart) {
      this.currentLoadedAt = Date.now();
      const loading = this.loadOrCreate().catch((error) => {
        if (this.current === loading) this.current = undefined;
        throw error;
      });
      this.current = loading;
    }
    return this.current;
  }

  /**
   * Publishes a new key at once and makes it sign `publishAheadMs` later, when every JWKS cached
   * before the rotation has expired, so no verifier meets a token signed by a key it does not
   * know. The keys it supersedes keep signing until then, stay in the JWKS and keep verifying until
   * every token they signed has expired (`RETIREMENT_DELAY_MS` after the new key starts); the
   * housekeeping job then deletes them. Every process switches when the new key's start comes.
   */
  async rotate(): Promise<Rotation> {
    const rotation = await this.createKey(new Date(Date.now() + this.publishAheadMs));
    this.current = undefined;
    return rotation;
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
   * The key in force, or a new one signing at once when there is none or it was sealed under
   * another master key (after MASTER_KEY changed: tokens signed before stay verifiable, their
   * public keys remain).
   */
  private async loadOrCreate(): Promise<SigningKey> {
    const [existing, nextStart] = await Promise.all([
      repository.signingKeyInForce(this.db),
      repository.nextSigningKeyStart(this.db),
    ]);
    const opened = existing ? this.open(Buffer.from(existing.privateKeyEncrypted)) : null;
    if (existing && opened) {
      this.nextStart = nextStart?.getTime() ?? Infinity;
      return this.remember(existing, opened);
    }
    const { kid } = await this.createKey(new Date(), { retireOthers: false });
    const row = await repository.findSigningKey(this.db, kid);
    const created = row ? this.open(Buffer.from(row.privateKeyEncrypted)) : null;
    if (!row || !created) throw new Error(`the signing key ${kid} just made current cannot be opened`);
    return this.remember(row, created);
  }

  /** Keeps a key's public half for verification; its private half, ready to sign. */
  private async remember(row: { kid: string; algorithm: string; publicJwk: unknown }, privateJwk: JWK) {
    this.publicKeys.set(row.kid, {
      key: (await importJWK(row.publicJwk as JWK, row.algorithm)) as CryptoKey,
      retireAt: Date.now() + CURRENT_KEY_RECHECK_MS,
    });
    return { kid: row.kid, privateKey: (await importJWK(privateJwk, row.algorithm)) as CryptoKey };
  }

  /**
   * Creates a key that signs from `signsFrom`; unless told otherwise, schedules the retirement of
   * every other key: `RETIREMENT_DELAY_MS` after the new key starts, when all they signed has expired.
   */
  private async createKey(signsFrom: Date, { retireOthers = true } = {}): Promise<Rotation> {
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const privateJwk = await exportJWK(privateKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const created = await writeTransaction(this.db, async (tx) => {
      await repository.lockSigningKeyCreation(tx);
      if (!retireOthers) {
        // Two processes finding no key at once: the second uses the first's.
        const inForce = await repository.signingKeyInForce(tx);
        if (inForce && this.open(Buffer.from(inForce.privateKeyEncrypted))) return { kid: inForce.kid, retiring: [] };
      }
      const retiring = retireOthers
        ? await repository.retireSigningKeys(tx, new Date(signsFrom.getTime() + RETIREMENT_DELAY_MS))
        : [];
      await repository.insertSigningKey(tx, {
        kid,
        algorithm: SIGNING_ALGORITHM,
        publicJwk,
        privateKeyEncrypted: this.encrypt(JSON.stringify(privateJwk)),
        signsFrom,
      });
      return { kid, retiring: retiring.map((key) => ({ kid: key.kid, retireAt: key.retireAt! })) };
    });
    return { ...created, signsFrom };
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
