/**
 * The nesting of a GraphQL document, measured on its text before it is parsed. graphql-js parses
 * recursively: a document opening a few thousand lists (`input: [[[[…`) overflows the stack before
 * the token limit stops it. Selection sets, arguments, lists and input objects all count.
 */
import { GraphQLError, type Source } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { MAX_JSON_DEPTH } from '../request-limits';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HASH = 0x23;
const NEWLINE = 0x0a;
const RETURN = 0x0d;
const OPENING = new Set([0x7b, 0x5b, 0x28]); // { [ (
const CLOSING = new Set([0x7d, 0x5d, 0x29]); // } ] )

/** Whether the document nests deeper than `limit`, skipping strings, block strings and comments; one pass. */
export function documentNestsDeeperThan(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  const length = text.length;
  for (let index = 0; index < length; index += 1) {
    const char = text.charCodeAt(index);
    if (char === HASH) {
      while (index + 1 < length && text.charCodeAt(index + 1) !== NEWLINE && text.charCodeAt(index + 1) !== RETURN)
        index += 1;
    } else if (char === QUOTE) {
      if (text.startsWith('"""', index)) {
        // A block string ends at the next """ not escaped as \""".
        index += 3;
        while (index < length && !(text.startsWith('"""', index) && text.charCodeAt(index - 1) !== BACKSLASH))
          index += 1;
        index += 2;
      } else {
        index += 1;
        while (index < length && text.charCodeAt(index) !== QUOTE && text.charCodeAt(index) !== NEWLINE) {
          if (text.charCodeAt(index) === BACKSLASH) index += 1;
          index += 1;
        }
      }
    } else if (OPENING.has(char)) {
      depth += 1;
      if (depth > limit) return true;
    } else if (CLOSING.has(char)) {
      depth -= 1;
    }
  }
  return false;
}

/** Refuses a document nested too deep before yoga parses it, as a syntax error (VALIDATION_ERROR, HTTP 200). */
export const documentDepthLimit: Plugin = {
  onParse({ params }) {
    const source = params.source;
    const text = typeof source === 'string' ? source : (source as Source).body;
    if (documentNestsDeeperThan(text))
      throw new GraphQLError(`Syntax Error: the document nests deeper than ${MAX_JSON_DEPTH} levels.`, {
        extensions: { code: 'VALIDATION_ERROR' },
      });
  },
};
