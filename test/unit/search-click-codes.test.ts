import { describe, expect, it } from 'vitest';
import { clickTarget, createClickCodec } from '../../src/modules/search/click-codes';

const click = {
  indexId: 'index-1',
  searchId: 'search-1',
  documentId: 'doc-1',
  position: 3,
  url: 'https://shop.example.com/p/1',
};

describe('click codes', () => {
  const codec = createClickCodec('secret');

  it('round-trip what they carry', () => {
    expect(codec.decode(codec.encode(click))).toEqual(click);
  });

  it('are refused when edited, signed with another secret or malformed', () => {
    const [payload, signature] = codec.encode(click).split('.') as [string, string];
    const edited = Buffer.from(
      JSON.stringify(['index-1', 'search-1', 'doc-1', 3, 'https://evil.example.com']),
    ).toString('base64url');
    expect(codec.decode(`${edited}.${signature}`)).toBeNull();
    expect(codec.decode(`${payload}.${signature.slice(1)}`)).toBeNull();
    expect(createClickCodec('other').decode(codec.encode(click))).toBeNull();
    expect(codec.decode('nodot')).toBeNull();
    expect(codec.decode(`${payload}.${signature}.extra`)).toBeNull();
    expect(codec.decode('x'.repeat(5000))).toBeNull();
  });
});

describe('clickTarget', () => {
  it("is the document's url field, else metadata.url, when it is an http(s) URL", () => {
    expect(clickTarget({ url: 'https://a.example.com/x' }, { url: 'https://b.example.com' })).toBe(
      'https://a.example.com/x',
    );
    expect(clickTarget({}, { url: 'http://b.example.com' })).toBe('http://b.example.com');
    expect(clickTarget({ url: 'javascript:alert(1)' }, null)).toBeNull();
    expect(clickTarget({ url: 'not a url' }, null)).toBeNull();
  });
});
