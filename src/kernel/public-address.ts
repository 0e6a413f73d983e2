/**
 * Which addresses the service may fetch from when a client names the URL (an edge origin, a
 * webhook, an OAuth client's metadata document): without this check a client could make the
 * service fetch from its own network. Loopback, private ranges, link-local (where cloud metadata
 * services live) and other non-public ranges are refused.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, including 169.254.169.254 metadata
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  // IPv4-mapped addresses (::ffff:a.b.c.d) need no rule: BlockList checks them against the IPv4 rules.
  ['64:ff9b::', 96], // NAT64: would reach IPv4 addresses past the IPv4 rules
  ['64:ff9b:1::', 48], // local-use NAT64
  ['fc00::', 7], // unique local, including fd00:ec2::254 metadata
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** Whether `address` (an IP literal) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** A host that is or resolves to a non-public address, or does not resolve. */
export class AddressError extends Error {}

/** A host that is or resolves to a non-public address while those are not allowed: retrying cannot change that. */
export class PrivateAddressError extends AddressError {}

/** How refusals name what was fetched and the setting that allows private addresses. */
export interface AddressNaming {
  /** "origin", "client metadata document"... */
  what: string;
  /** What allows private addresses, e.g. "set EDGE_ALLOW_PRIVATE_ORIGINS=true to allow origins on your own network". */
  fix: string;
}

const refusedAddress = (naming: AddressNaming, host: string, address: string) =>
  new PrivateAddressError(
    `the ${naming.what} host "${host}" resolves to ${address}, a loopback, private, link-local or otherwise ` +
      `non-public address; ${naming.fix}`,
  );

/**
 * The address of a host named by an IP literal (bracketed for IPv6), checked like a resolved one;
 * undefined for a host name, which needs `resolvePublicAddress`.
 */
export function literalAddress(
  hostname: string,
  allowPrivate: boolean,
  naming: AddressNaming,
): ResolvedAddress | undefined {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  const family = isIP(host);
  if (family === 0) return undefined;
  if (!allowPrivate && !isPublicAddress(host)) throw refusedAddress(naming, host, host);
  return { address: host, family: family === 6 ? 6 : 4 };
}

/**
 * Resolves a host name to the address to connect to. Every address it resolves to must be public
 * unless `allowPrivate`; the caller connects to the returned address, so a second DNS answer
 * cannot swap in another one.
 */
export async function resolvePublicAddress(
  hostname: string,
  allowPrivate: boolean,
  naming: AddressNaming,
): Promise<ResolvedAddress> {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  const literal = isIP(host);
  let addresses: { address: string; family: number }[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal }];
  } else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'DNS error';
      throw new AddressError(`the ${naming.what} host "${host}" could not be resolved (${code})`);
    }
  }
  if (addresses.length === 0) throw new AddressError(`the ${naming.what} host "${host}" has no address`);
  if (!allowPrivate) {
    const refused = addresses.find(({ address }) => !isPublicAddress(address));
    if (refused) throw refusedAddress(naming, host, refused.address);
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
