import { describe, expect, it } from 'vitest';
import { canonicalResource, narrowedResources, requestedResources } from '../../src/modules/oauth/resources';

const ISSUER = 'https://api.example.com';
const MCP = `${ISSUER}/mcp`;

describe('canonicalResource', () => {
  it('lowercases the scheme and host only', () => {
    expect(canonicalResource('HTTPS://API.Example.COM/Mcp')).toBe('https://api.example.com/Mcp');
    expect(canonicalResource(MCP)).toBe(MCP);
  });

  it('refuses what is not an absolute URI without a fragment', () => {
    for (const value of ['', '/mcp', 'mcp', `${MCP}#x`, `${MCP}#`, 'urn:example:x', 'https://', 'a'.repeat(3000)])
      expect(canonicalResource(value)).toBeNull();
  });
});

describe('requestedResources', () => {
  it('defaults to none (the issuer) for a client that may use the API, else to its resources', () => {
    expect(requestedResources(undefined, { resources: [] }, ISSUER)).toEqual([]);
    expect(requestedResources(undefined, { resources: [MCP] }, ISSUER)).toEqual([MCP]);
  });

  it('drops duplicates and refuses what the client may not use', () => {
    expect(requestedResources([MCP, MCP.toUpperCase().replace('/MCP', '/mcp')], { resources: [] }, ISSUER)).toEqual([
      MCP,
    ]);
    expect(() => requestedResources(ISSUER, { resources: [MCP] }, ISSUER)).toThrow(/invalid_target/);
    expect(() => requestedResources('https://other.example.com', { resources: [] }, ISSUER)).toThrow(/invalid_target/);
  });
});

describe('narrowedResources', () => {
  it('keeps the grant, narrows within it, and treats a grant without resources as the API', () => {
    expect(narrowedResources(undefined, { resources: [MCP, ISSUER] }, ISSUER)).toEqual([MCP, ISSUER]);
    expect(narrowedResources(MCP, { resources: [MCP, ISSUER] }, ISSUER)).toEqual([MCP]);
    expect(narrowedResources(ISSUER, { resources: [] }, ISSUER)).toEqual([ISSUER]);
    expect(() => narrowedResources(MCP, { resources: [] }, ISSUER)).toThrow(/invalid_target/);
  });
});
