import { describe, expect, it } from 'vitest';
import {
  JsonDepthGauge,
  jsonShapeProblem,
  MAX_JSON_DEPTH,
  MAX_JSON_MEMBERS,
  MAX_JSON_VALUES,
  parseClientJson,
} from '../../src/kernel/request-limits';
import { isStorableText } from '../../src/kernel/validation';

const members = (count: number) =>
  `{${Array.from({ length: count }, (_, index) => `"k${index}":${index % 2 ? '"v,}"' : '[]'}`).join(',')}}`;
const values = (count: number) => `[${new Array(count).fill('0').join(' , ')}]`;

describe('the shape of a JSON text, measured in one pass', () => {
  it('takes objects of up to the member limit, and refuses one more', () => {
    expect(jsonShapeProblem(members(MAX_JSON_MEMBERS))).toBeNull();
    expect(jsonShapeProblem(`{"data":${members(MAX_JSON_MEMBERS + 1)}}`)).toBe('members');
  });

  it('counts the values of the whole text: elements and members, empty containers holding none', () => {
    expect(jsonShapeProblem(values(MAX_JSON_VALUES))).toBeNull();
    expect(jsonShapeProblem(values(MAX_JSON_VALUES + 1))).toBe('values');
    // 50 000 objects of one member in an array: 100 000 values.
    const objects = (count: number) => `[${new Array(count).fill('{"a":{}}').join(',')}]`;
    expect(jsonShapeProblem(objects(MAX_JSON_VALUES / 2))).toBeNull();
    expect(jsonShapeProblem(`{"x":${objects(MAX_JSON_VALUES / 2)}}`)).toBe('values');
    expect(jsonShapeProblem(`[${new Array(MAX_JSON_VALUES).fill('[ ]').join(',')}]`)).toBeNull();
  });

  it('skips commas and brackets in strings, escaped quotes included', () => {
    const text = `{"a":"${'\\",[{'.repeat(MAX_JSON_VALUES)}"}`;
    expect(jsonShapeProblem(text)).toBeNull();
    expect(parseClientJson(text)).toEqual({ a: '",[{'.repeat(MAX_JSON_VALUES) });
  });

  it('still refuses nesting past the depth limit first', () => {
    expect(jsonShapeProblem('['.repeat(MAX_JSON_DEPTH + 1))).toBe('depth');
    expect(jsonShapeProblem('['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH))).toBeNull();
  });

  it('measures a text fed in pieces as it measures it whole, bytes or characters', () => {
    const text = `{"data":${members(MAX_JSON_MEMBERS + 1)}}`;
    const bytes = Buffer.from(text);
    const gauge = new JsonDepthGauge();
    let exceeded = false;
    for (let at = 0; at < bytes.length && !exceeded; at += 7) exceeded = gauge.exceeded(bytes.subarray(at, at + 7));
    expect(exceeded).toBe(true);
    expect(gauge.problem).toBe('members');
  });

  it('refuses JSON parsed outside the body parser with a 400 naming the field and the limit', () => {
    expect(() => parseClientJson(values(MAX_JSON_VALUES + 1), 'filter')).toThrow(
      `filter holds more than ${MAX_JSON_VALUES} values`,
    );
    expect(() => parseClientJson(members(MAX_JSON_MEMBERS + 1))).toThrow(
      `body has an object with more than ${MAX_JSON_MEMBERS} members`,
    );
  });
});

describe('the text rule, in one pass', () => {
  it('refuses NUL and unpaired surrogates, and takes pairs and everything else', () => {
    expect(isStorableText('plain text, tabs\t and émojis 😀')).toBe(true);
    expect(isStorableText('')).toBe(true);
    for (const text of ['a\u0000b', '\ud83d', 'a\ud83db', '\ude00', 'x\ude00\ud83d', '😀\ud83d'])
      expect(isStorableText(text), JSON.stringify(text)).toBe(false);
    expect(isStorableText('\ud83d\ude00\ud83d\ude00')).toBe(true);
  });
});
