import { AppError } from '../../kernel/errors';
import type { Principal } from '../../kernel/principal';

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
] as const;

export type Scope = (typeof SCOPES)[number];
export const ALL_SCOPES = '*';
export type GrantableScope = Scope | typeof ALL_SCOPES;

export type { Principal } from '../../kernel/principal';

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.has(ALL_SCOPES) || principal.scopes.has(scope);
}

/** Throws FORBIDDEN unless the principal holds `scope` (or `*`). */
export function requireScope(principal: Principal, scope: Scope): void {
  if (!hasScope(principal, scope)) throw new AppError('FORBIDDEN', `this operation needs scope ${scope}`);
}
