/**
 * Every 401 of the REST and GraphQL API names the API's protected resource metadata (RFC 9728) in
 * its challenge, and says invalid_token when a credential was sent; a 403 for a scope the credential
 * lacks says insufficient_scope and the scope (RFC 6750). The error bodies are unchanged.
 */
import { describe, expect, it } from 'vitest';
import { createTenant, startTestApp } from '../helpers/app';

const { app, services, rest } = await startTestApp();
const metadata = `resource_metadata="${services.baseUrl}/.well-known/oauth-protected-resource"`;
const PROXIES = '/api/storage/edge/proxies';

describe('401 challenges', () => {
  it('names the resource metadata on REST without a credential, with no error code', async () => {
    const res = await app.inject({ method: 'GET', url: PROXIES });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer ${metadata}`);
    expect(res.json().error.code).toBe(401);
  });

  it('says invalid_token on REST for a credential it refuses', async () => {
    for (const token of ['sk_nope', 'a.b.c']) {
      const res = await app.inject({ method: 'GET', url: PROXIES, headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe(`Bearer ${metadata}, error="invalid_token"`);
      expect(res.json().error.code).toBe(401);
    }
  });

  it('names the resource metadata on GraphQL', async () => {
    const missing = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ __typename }' } });
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['www-authenticate']).toBe(`Bearer ${metadata}`);
    const bad = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: 'Bearer sk_nope' },
      payload: { query: '{ __typename }' },
    });
    expect(bad.statusCode).toBe(401);
    expect(bad.headers['www-authenticate']).toBe(`Bearer ${metadata}, error="invalid_token"`);
  });
});

describe('403 challenges', () => {
  it('name the scope a REST operation needs, and nothing is written', async () => {
    const { key } = await createTenant(rest, 'Reader', ['proxies:read']);
    const refused = await app.inject({
      method: 'POST',
      url: PROXIES,
      headers: { authorization: `Bearer ${key}` },
      payload: { data: { key: 'refused-shop', routes: { path: '*', origin: { uri: 'https://example.com' } } } },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="proxies:write"');
    expect(refused.json().error.code).toBe(403);
    const listed = await app.inject({ method: 'GET', url: PROXIES, headers: { authorization: `Bearer ${key}` } });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data).toEqual([]);
  });

  it('name the scope a GraphQL field needs, the answer staying 200 with the FORBIDDEN error', async () => {
    const { key } = await createTenant(rest, 'Proxy reader', ['proxies:read']);
    // Both the direct path (application/json) and yoga's (graphql-response+json) carry the challenge.
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      const refused = await app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${key}`, accept },
        payload: { query: '{ products(first: 1) { edges { node { id } } } }' },
      });
      expect(refused.statusCode).toBe(200);
      expect(refused.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="catalog:read"');
      expect(refused.json().errors[0].extensions.code).toBe('FORBIDDEN');
    }
    const allowed = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${key}` },
      payload: { query: '{ __typename }' },
    });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.headers['www-authenticate']).toBeUndefined();
  });
});
