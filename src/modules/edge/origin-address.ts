/**
 * Which addresses an origin may have: public ones only, unless EDGE_ALLOW_PRIVATE_ORIGINS (the
 * check itself is the kernel's, ../../kernel/public-address.ts).
 */
import {
  AddressError,
  isPublicAddress,
  literalAddress,
  resolvePublicAddress,
  type ResolvedAddress,
} from '../../kernel/public-address';

export { isPublicAddress };
export type ResolvedOrigin = ResolvedAddress;
export { AddressError as OriginAddressError };

const ORIGIN = {
  what: 'origin',
  fix: 'set EDGE_ALLOW_PRIVATE_ORIGINS=true to allow origins on your own network',
};

/**
 * The address of an origin named by an IP literal (bracketed for IPv6), checked like a resolved
 * one; undefined for a host name, which needs `resolveOrigin`.
 */
export const literalOrigin = (hostname: string, allowPrivate: boolean) =>
  literalAddress(hostname, allowPrivate, ORIGIN);

/** Resolves an origin host name to the address to connect to (see `resolvePublicAddress`). */
export const resolveOrigin = (hostname: string, allowPrivate: boolean) =>
  resolvePublicAddress(hostname, allowPrivate, ORIGIN);
