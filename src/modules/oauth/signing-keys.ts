import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { writeTransaction, type Db } from '../../kernel/db';
import * as repository from './oauth.repository';

export const SIGNING_ALGORITHM = 'ES256';

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
  private readonly publicKeys = new Map<string, CryptoKey>();

  constructor(
    private readonly db: Db,
    masterKey: string,
  ) {
    this.encryptionKey = createHmac('sha256', masterKey).update('oauth-signing-keys').digest();
  }

  /** The key new tokens are signed with. */
  signingKey(): Promise<SigningKey> {
    this.current ??= this.loadOrCreate().catch((error) => {
      this.current = undefined;
      throw error;
    });
    return this.current;
  }

  /** The public key with this `kid`, or undefined when no such key exists. */
  async verificationKey(kid: string | undefined): Promise<CryptoKey | undefined> {
    if (!kid) return undefined;
    const known = this.publicKeys.get(kid);
    if (known) return known;
    // A key made by another process after this one last looked.
    for (const row of await repository.listSigningKeys(this.db)) {
      if (!this.publicKeys.has(row.kid))
        this.publicKeys.set(row.kid, (await importJWK(row.publicJwk as JWK, row.algorithm)) as CryptoKey);
    }
    return this.publicKeys.get(kid);
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
  private async loadOrCreate(): Promise<SigningKey> {
    const { row, privateJwk } = await writeTransaction(this.db, async (tx) => {
      await repository.lockSigningKeyCreation(tx);
      const existing = await repository.newestSigningKey(tx);
      const opened = existing ? this.open(Buffer.from(existing.privateKeyEncrypted)) : null;
      if (existing && opened) return { row: existing, privateJwk: opened };
      const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
      const publicJwk = await exportJWK(publicKey);
      const newPrivateJwk = await exportJWK(privateKey);
      const inserted = await repository.insertSigningKey(tx, {
        kid: await calculateJwkThumbprint(publicJwk),
        algorithm: SIGNING_ALGORITHM,
        publicJwk,
        privateKeyEncrypted: this.encrypt(JSON.stringify(newPrivateJwk)),
      });
      return { row: inserted, privateJwk: newPrivateJwk };
    });
    this.publicKeys.set(row.kid, (await importJWK(row.publicJwk as JWK, row.algorithm)) as CryptoKey);
    return { kid: row.kid, privateKey: (await importJWK(privateJwk, row.algorithm)) as CryptoKey };
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
