import { describe, expect, it } from 'vitest';
import { bannerLines } from '../../src/banner';

describe('the start banner', () => {
  const baseUrl = 'http://127.0.0.1:3000';

  it('names the URL, the reference, GraphQL and the file that holds the master key', () => {
    const text = bannerLines({ baseUrl, masterKeyFile: '.data/master.key', masterKeyGenerated: true }).join('\n');
    expect(text).toContain('listening on http://127.0.0.1:3000');
    expect(text).toContain('http://127.0.0.1:3000/docs');
    expect(text).toContain('http://127.0.0.1:3000/graphql');
    expect(text).toMatch(/master key +generated now, in \.data\/master\.key \(cat \.data\/master\.key\)/);
  });

  it('names the one command that gets an API key, and the demo data', () => {
    const text = bannerLines({ baseUrl, masterKeyFile: '.data/master.key', masterKeyGenerated: false }).join('\n');
    expect(text).toMatch(/first API key +npm run admin -- quickstart/);
    expect(text).toMatch(/demo data +npm run seed .*http:\/\/127\.0\.0\.1:3000\/demo\/demo-shop/);
  });

  it('says the key comes from MASTER_KEY when no file holds it', () => {
    const text = bannerLines({ baseUrl, masterKeyFile: undefined, masterKeyGenerated: false }).join('\n');
    expect(text).toMatch(/master key +from MASTER_KEY/);
    expect(text).not.toContain('generated');
  });
});
