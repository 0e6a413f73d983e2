/**
 * Sign-in throttling of the login page, after Keycloak's brute-force detection, counted in
 * PostgreSQL so that every process of a deployment shares it.
 *
 * What is counted: every sign-in attempt that reaches the password check, against two rows of the
 * tenant, the **account** (the e-mail address typed, trimmed and lowercased, whether or not a user
 * has it, so that the answers never tell whether it exists) and the **client address** (an IPv6
 * address by its /64). An attempt counts as it starts, before its password is checked, so that a
 * burst of concurrent guesses cannot all be checked before the first failure is recorded; one that
 * succeeds is taken back from the address and clears the account.
 *
 * What it leads to, with the defaults (SIGN_IN_* variables): the 5th failure of an account within 15
 * minutes locks that account's sign-in, the 20th failure from one address to one tenant within 15
 * minutes locks that address's. A lock, not a delay: a delay would hold a request (and a connection)
 * per guess, while a lock answers at once. The first lock of a row lasts 15 minutes and each further
 * one twice as long as the one before (30 minutes, 1 hour, ...), at most 4 hours; a row and so its
 * locks are forgotten 12 hours after its last attempt or the end of its lock, and an account's at
 * once when it signs in. While locked, every attempt, with the right password too, is refused
 * without checking the password and is not counted, with the same answer for every account.
 */
import { createHash } from 'node:crypto';
import { clientAddressKey } from '../../../kernel/client-address';
import type { SignInThrottleConfig } from '../../../kernel/config';
import type { Db } from '../../../kernel/db';
import * as repository from './sign-in-throttles.repository';
import type { CountedRow, ThrottleKey } from './sign-in-throttles.repository';

/** How long a row outlives its last attempt or lock: until then, a new lock is longer than the last. */
export const THROTTLE_MEMORY_SECONDS = 12 * 3600;

/** An attempt that was counted and may have its password checked. */
export interface CountedAttempt {
  account: ThrottleKey;
  address: ThrottleKey;
  rows: CountedRow[];
}

export type Admission = { kind: 'admitted'; attempt: CountedAttempt } | { kind: 'locked'; retryAfterSeconds: number };

const sha256 = (value: string) => createHash('sha256').update(value).digest();

export class SignInThrottle {
  constructor(
    private readonly db: Db,
    private readonly config: SignInThrottleConfig,
  ) {}

  private limitOf(kind: repository.ThrottleKind) {
    return kind === 'ACCOUNT' ? this.config.accountFailures : this.config.addressFailures;
  }

  /**
   * Counts an attempt on `email` (already normalised) from `clientAddress` before its password is
   * checked. Locked: when the account or the address is locked, or when this attempt is one more
   * than the limit allows (others of a burst are still being checked; it locks the row itself).
   */
  async admit(tenantId: string, email: string, clientAddress: string): Promise<Admission> {
    const account: ThrottleKey = { tenantId, kind: 'ACCOUNT', subjectHash: sha256(email) };
    const address: ThrottleKey = { tenantId, kind: 'ADDRESS', subjectHash: sha256(clientAddressKey(clientAddress)) };
    const rows = await repository.countSignInAttempt(
      this.db,
      tenantId,
      { account: account.subjectHash, address: address.subjectHash },
      this.config.windowSeconds,
      THROTTLE_MEMORY_SECONDS,
    );
    const attempt = { account, address, rows };
    const locked = this.longest(rows.map((row) => row.retry_after));
    if (locked !== null) return { kind: 'locked', retryAfterSeconds: locked };
    const beyond = await this.lockRows(attempt, (failures, limit) => failures > limit);
    return beyond === null ? { kind: 'admitted', attempt } : { kind: 'locked', retryAfterSeconds: beyond };
  }

  /** The password was right: the account's count and locks are cleared, the address's count takes the attempt back. */
  async succeeded(attempt: CountedAttempt): Promise<void> {
    await repository.forgetSignInFailures(this.db, attempt.account);
    const addressRow = attempt.rows.find((row) => row.kind === 'ADDRESS');
    if (addressRow?.window_start)
      await repository.uncountSignInAttempt(this.db, attempt.address, addressRow.window_start);
  }

  /** The password was wrong: locks the rows this failure brought to their limit; answers how long, if it did. */
  failed(attempt: CountedAttempt): Promise<number | null> {
    return this.lockRows(attempt, (failures, limit) => failures >= limit);
  }

  /** Locks the rows of the attempt whose count meets `due`; the longest wait of those locked, or null. */
  private async lockRows(attempt: CountedAttempt, due: (failures: number, limit: number) => boolean) {
    const waits: (number | null)[] = [];
    for (const row of attempt.rows) {
      const limit = this.limitOf(row.kind);
      if (row.failures === null || !due(row.failures, limit)) continue;
      const key = row.kind === 'ACCOUNT' ? attempt.account : attempt.address;
      waits.push(
        await repository.lockSignIn(this.db, key, {
          limit,
          lockSeconds: this.config.lockSeconds,
          maxLockSeconds: this.config.maxLockSeconds,
          keepSeconds: THROTTLE_MEMORY_SECONDS,
        }),
      );
    }
    return this.longest(waits);
  }

  private longest(waits: (number | null)[]): number | null {
    const known = waits.filter((wait): wait is number => wait !== null);
    return known.length === 0 ? null : Math.max(1, ...known);
  }
}
