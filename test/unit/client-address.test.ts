import { describe, expect, it } from 'vitest';
import { clientAddressKey } from '../../src/kernel/client-address';

describe('clientAddressKey', () => {
  it('keeps an IPv4 address, and takes the IPv4 address out of an IPv4-mapped IPv6 one', () => {
    expect(clientAddressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressKey('::FFFF:203.0.113.7')).toBe('203.0.113.7');
  });

  it('counts every IPv6 address of one /64 as one client, however it is written', () => {
    const key = '2001:db8:0:1::/64';
    expect(clientAddressKey('2001:db8:0:1::1')).toBe(key);
    expect(clientAddressKey('2001:0db8:0000:0001:ffff:ffff:ffff:ffff')).toBe(key);
    expect(clientAddressKey('2001:DB8:0:1:a:b:c:d')).toBe(key);
    expect(clientAddressKey('2001:db8::1:0:0:0:5')).toBe(key);
    expect(clientAddressKey('2001:db8:0:2::1')).toBe('2001:db8:0:2::/64');
  });

  it('reads the short forms: zeros left out at either end, an IPv4 tail, a zone', () => {
    expect(clientAddressKey('::1')).toBe('0:0:0:0::/64');
    expect(clientAddressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientAddressKey('64:ff9b::192.0.2.33')).toBe('64:ff9b:0:0::/64');
    expect(clientAddressKey('1:2:3:4:5:6:192.0.2.33')).toBe('1:2:3:4::/64');
    expect(clientAddressKey('2001:db8:1:2::')).toBe('2001:db8:1:2::/64');
  });

  it('leaves what is not an address unchanged', () => {
    expect(clientAddressKey('')).toBe('');
    expect(clientAddressKey('not an address')).toBe('not an address');
  });
});
