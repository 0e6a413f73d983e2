import { isIPv4, isIPv6 } from 'node:net';

/** The 16-bit groups of an IPv6 address (an embedded IPv4 tail counts as its two groups). */
function ipv6Groups(address: string): number[] {
  const parse = (part: string) =>
    part === '' ? [] : part.split(':').flatMap((group) => (group.includes('.') ? [0, 0] : [parseInt(group, 16)]));
  const gap = address.indexOf('::');
  if (gap === -1) return parse(address);
  const head = parse(address.slice(0, gap));
  const tail = parse(address.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/**
 * The client a request's address stands for, for counting per client: an IPv4 address as it is
 * (an IPv4-mapped IPv6 one as its IPv4 address), an IPv6 address by its /64 prefix, because one
 * subscriber is routinely given a whole /64 and would otherwise count as 2^64 clients. Anything
 * else (no address) is returned unchanged.
 */
export function clientAddressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (isIPv4(address)) return address;
  const unzoned = address.split('%')[0]!;
  if (!isIPv6(unzoned)) return address;
  const prefix = ipv6Groups(unzoned)
    .slice(0, 4)
    .map((group) => group.toString(16));
  return `${prefix.join(':')}::/64`;
}
