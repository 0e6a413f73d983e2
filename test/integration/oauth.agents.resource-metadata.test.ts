/**
 * RFC 9728 protected resource metadata: the API (REST and GraphQL, whose tokens have the issuer as
 * audience) and `/mcp` each publish where a client obtains tokens for them.
 */
import { describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';

const { app, services } = await startTestApp();
const base = services.baseUrl;
const MCP_SCOPES = ['inventory:read', 'inventory:write', 'orders:read', 'search'];

describe('protected resource metadata', () => {
  it('describes the API as the resource named by the issuer', async () => {
    const res = await app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(body).toMatchObject({
      resource: base,
      authorization_servers: [base],
      bearer_methods_supported: ['header'],
    });
    expect(body.resource_name).toEqual(expect.any(String));
    expect(body.scopes_supported).toContain('search');
    expect(body.scopes_supported).toContain('*');
    expect(body.scopes_supported).not.toContain('openid');
  });

  it('describes /mcp as its own resource with the same authorization server and the scopes of its operations', async () => {
    const res = await app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource/mcp' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      resource: `${base}/mcp`,
      authorization_servers: [base],
      bearer_methods_supported: ['header'],
      scopes_supported: MCP_SCOPES,
    });
  });

  it('names an authorization server whose metadata carries the same issuer', async () => {
    const resource = (await app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource/mcp' })).json();
    const server = resource.authorization_servers[0] as string;
    const as = (await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json();
    expect(as.issuer).toBe(server);
  });

  it('publishes the document the /mcp challenge points at', async () => {
    const res = await app.inject({ method: 'POST', url: '/mcp', payload: {} });
    expect(res.statusCode).toBe(401);
    // The challenge names the scopes the operations need, which an MCP client asks for first.
    expect(res.headers['www-authenticate']).toContain(`scope="${MCP_SCOPES.join(' ')}"`);
    const match = /resource_metadata="([^"]+)"/.exec(String(res.headers['www-authenticate']));
    expect(match).not.toBeNull();
    const url = new URL(match![1]!);
    expect(url.origin).toBe(new URL(base).origin);
    const doc = await app.inject({ method: 'GET', url: url.pathname });
    expect(doc.statusCode).toBe(200);
    expect(doc.json().resource).toBe(`${base}/mcp`);
  });

  it('has no document for a resource it does not serve', async () => {
    const res = await app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource/other' });
    expect(res.statusCode).toBe(404);
  });
});
