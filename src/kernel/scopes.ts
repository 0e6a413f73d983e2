import { AppError } from './errors';
import type { Principal } from './principal';

/** Every scope a credential can carry; `*` grants all of them. */
export const SCOPES = [
  'proxies:read',
  'proxies:write',
  'indexes:read',
  'indexes:write',
  'search',
  'inventory:read',
  'inventory:write',
  'catalog:read',
  'catalog:write',
  'orders:read',
  'orders:write',
  'pricing:write',
  'checkout:write',
] as const;

export type Scope = (typeof SCOPES)[number];
export const ALL_SCOPES = '*';
export type GrantableScope = Scope | typeof ALL_SCOPES;

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.has(ALL_SCOPES) || principal.scopes.has(scope);
}

/**
 * The refusal of a credential that lacks `scope`: FORBIDDEN with the RFC 6750 challenge naming the
 * scope needed (`error="insufficient_scope"`), from which a client knows what to ask for.
 */
export function insufficientScope(scope: string, what = 'this operation'): AppError {
  return new AppError('FORBIDDEN', `${what} needs scope ${scope}`, {
    headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
  });
}

/** Throws FORBIDDEN (with the insufficient_scope challenge) unless the principal holds `scope` (or `*`). */
export function requireScope(principal: Principal, scope: Scope): void {
  if (!hasScope(principal, scope)) throw insufficientScope(scope);
}
