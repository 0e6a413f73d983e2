import { describe, expect, it } from 'vitest';
import { documentNestsDeeperThan } from '../../src/kernel/graphql/document-depth';

describe('documentNestsDeeperThan', () => {
  it('counts selection sets, arguments, lists and input objects', () => {
    expect(documentNestsDeeperThan('{ a { b } }', 2)).toBe(false);
    expect(documentNestsDeeperThan('{ a { b { c } } }', 2)).toBe(true);
    expect(documentNestsDeeperThan('{ a(x: [[1]]) }', 4)).toBe(false);
    expect(documentNestsDeeperThan('{ a(x: [[{y: 1}]]) }', 4)).toBe(true);
    // Unclosed: what the parser would recurse into all the same.
    expect(documentNestsDeeperThan(`{ a(x: ${'['.repeat(10)}`, 5)).toBe(true);
  });

  it('skips strings, escaped quotes, block strings and comments', () => {
    expect(documentNestsDeeperThan('{ a(x: "[[[[[[") }', 2)).toBe(false);
    expect(documentNestsDeeperThan('{ a(x: "\\"[[[[[[") }', 2)).toBe(false);
    expect(documentNestsDeeperThan('{ a(x: """ [[[[ \\""" [[[[ """) }', 2)).toBe(false);
    expect(documentNestsDeeperThan('# [[[[[[[[\n{ a }', 1)).toBe(false);
    expect(documentNestsDeeperThan('{ a(x: """ [[ """) { b { c } } }', 2)).toBe(true);
  });
});
