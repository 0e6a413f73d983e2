import { describe, expect, it } from 'vitest';
import {
  majorVersion,
  protocolFor,
  UnsupportedTypesenseVersion,
} from '../../src/modules/search/engine/typesense-version';

describe('Typesense server versions', () => {
  it('reads the major version of current and 0.x release names', () => {
    expect(majorVersion('30.0')).toBe(30);
    expect(majorVersion('30.1.rc3')).toBe(30);
    expect(majorVersion('29.0')).toBe(29);
    expect(majorVersion('0.25.2')).toBe(25);
    expect(majorVersion('nightly')).toBeNull();
  });

  it('speaks synonym sets and exact group counts to v30, collection synonyms to v29', () => {
    expect(protocolFor('30.0')).toEqual({ version: '30.0', synonyms: 'synonym-sets', exactGroupCount: true });
    expect(protocolFor('29.0')).toEqual({
      version: '29.0',
      synonyms: 'collection-synonyms',
      exactGroupCount: false,
    });
  });

  it('refuses versions outside 29.x to 30.x, naming the range', () => {
    for (const version of ['28.0', '0.25.2', '31.0', 'nightly']) {
      expect(() => protocolFor(version)).toThrow(UnsupportedTypesenseVersion);
    }
    expect(() => protocolFor('28.0')).toThrow(
      'Typesense server version 28.0 is not supported: this service speaks Typesense 29.x to 30.x.',
    );
  });
});
