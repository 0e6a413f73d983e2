/**
 * Origins on the service's own network are refused unless EDGE_ALLOW_PRIVATE_ORIGINS is set: a
 * tenant chooses the origin URI, and must not be able to reach loopback, private, link-local or
 * cloud metadata addresses through the proxy.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../helpers/app';
import { edgeGet, proxyWith, startEdgeApp, startOrigin } from '../helpers/edge';

const { rest, baseUrl } = await startEdgeApp({ EDGE_ALLOW_PRIVATE_ORIGINS: 'false' });
const origin = await startOrigin((_request, response) => response.end('should not be reached'));

let tenant: Tenant;
beforeAll(async () => {
  tenant = await createTenant(rest, 'Safety tenant');
});

describe('private origins with EDGE_ALLOW_PRIVATE_ORIGINS off', () => {
  it.each([
    ['loopback-ip', origin.url, '127.0.0.1'],
    ['loopback-name', `http://localhost:${origin.port}`, undefined],
    ['loopback-v6', `http://[::1]:${origin.port}`, '::1'],
    ['mapped-v6', `http://[::ffff:127.0.0.1]:${origin.port}`, '::ffff:7f00:1'],
    ['metadata', 'http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['private-ten', 'http://10.1.2.3/', '10.1.2.3'],
    ['private-192', 'https://192.168.0.10/', '192.168.0.10'],
    ['zero', 'http://0.0.0.0/', '0.0.0.0'],
  ])('refuses %s (%s) with 502', async (key, uri, address) => {
    const created = await rest.post('/api/storage/edge/proxies', {
      token: tenant.key,
      body: proxyWith(key, { path: '/', origin: { uri } }),
    });
    expect(created.status).toBe(201);
    const response = await edgeGet(`${baseUrl}/edge/${key}/x`);
    expect(response.status).toBe(502);
    // The message names the setting that allows such origins.
    expect(response.json.error.message).toMatch(
      /^Bad gateway: .* resolves to .*non-public address; set EDGE_ALLOW_PRIVATE_ORIGINS=true to allow origins on your own network$/,
    );
    if (address) expect(response.json.error.message).toContain(`resolves to ${address},`);
    expect(origin.requests).toHaveLength(0);
  });

  it('answers 502 when the origin host does not resolve', async () => {
    const created = await rest.post('/api/storage/edge/proxies', {
      token: tenant.key,
      body: proxyWith('unresolvable', { path: '/', origin: { uri: 'http://no-such-host.invalid/' } }),
    });
    expect(created.status).toBe(201);
    const response = await edgeGet(`${baseUrl}/edge/unresolvable/x`);
    expect(response.status).toBe(502);
    expect(response.json.error.message).toMatch(/could not be resolved/);
  });
});
