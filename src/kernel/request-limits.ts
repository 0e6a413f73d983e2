/**
 * The limits a request meets at the door, before any other work on it. Every JSON text a client
 * sends comes through here (REST and GraphQL bodies, JSON sent under another declared media type):
 * its nesting, the members of each object and its values are measured on the text, in one pass,
 * before it is parsed, so a body nested 100 000 levels deep, or made of 100 000 small keys, is
 * refused without building 100 000 objects and before any walk of it (validation, the text rule,
 * hashing, logging) could cost more than its size. Query strings and form bodies
 * are bounded in their number of parameters and the shape of their names.
 */
import type { FastifyInstance } from 'fastify';
import { AppError, badRequest } from './errors';
import type { HostileSenders } from './hostile-senders';

/**
 * The deepest nesting of arrays and objects a JSON body may have. The deepest input the API
 * documents (a proxy's route settings, a search request's filter groups) nests under 10 levels;
 * 64 leaves documents' `metadata` ample room (Elasticsearch's default mapping depth is 20) while
 * keeping every walk and every recursive serializer far from the stack's limit.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The most members one JSON object may have. The widest object the API documents (a document's
 * fields, a rule's `data`, UCP metadata) has well under 100; 1,000 leaves documents room while a
 * body of 100 000 small keys is refused on the pass that measures its nesting.
 */
export const MAX_JSON_MEMBERS = 1_000;

/**
 * The most values one JSON body may hold: array elements and object members, counted through the
 * whole body. The largest write the API documents (1,000 documents or inventory lines) holds a few
 * tens of thousands; a megabyte of `0,` or of `"a",` (a quarter of a million values and more) is
 * refused on the same pass, before it is parsed.
 */
export const MAX_JSON_VALUES = 100_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const SPACE = 0x20;
const TAB = 0x09;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** Which limit a JSON text passes: its nesting, one object's members, or the body's values. */
export type JsonShapeProblem = 'depth' | 'members' | 'values';

/**
 * Measures the shape of a JSON text fed piece by piece, as its bytes arrive: its nesting, the
 * members of each object and the values of the whole text (array elements and object members).
 * Its structural characters are ASCII, which never occur inside a multi-byte UTF-8 sequence, so
 * undecoded bytes can be scanned. One pass, skipping strings (and the characters escaped in them),
 * counting each container's commas (and its first value, once something that is not its closing
 * bracket follows the opening one); text that is not JSON may be answered either way, and the
 * parser refuses it next.
 */
export class JsonDepthGauge {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Whether the innermost container was just opened (its first value, if any, not yet seen). */
  private opened = false;
  private values = 0;
  /** Per level: 1 for an object, 0 for an array. */
  private readonly objects: Uint8Array;
  /** Per level: the values of the container open at that level so far. */
  private readonly counts: Uint32Array;
  /** Which limit was passed, once `exceeded` has answered true. */
  problem: JsonShapeProblem | null = null;

  constructor(
    private readonly limit = MAX_JSON_DEPTH,
    private readonly maxMembers = MAX_JSON_MEMBERS,
    private readonly maxValues = MAX_JSON_VALUES,
  ) {
    this.objects = new Uint8Array(limit + 2);
    this.counts = new Uint32Array(limit + 2);
  }

  /** Feeds the next piece of the text; true once it passes a limit (`problem` says which). */
  exceeded(piece: Uint8Array | string): boolean {
    const text = typeof piece === 'string';
    let { depth, inString, escaped, opened, values } = this;
    const { objects, counts, maxMembers, maxValues, limit } = this;
    const length = piece.length;
    let problem: JsonShapeProblem | null = null;
    for (let index = 0; index < length; index += 1) {
      const char = text ? (piece as string).charCodeAt(index) : (piece as Uint8Array)[index]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (char === BACKSLASH) escaped = true;
        else if (char === QUOTE) inString = false;
        continue;
      }
      if (char === SPACE || char === LINE_FEED || char === CARRIAGE_RETURN || char === TAB) continue;
      if (opened) {
        opened = false;
        // The container's first value, unless it closes empty.
        if (char !== CLOSE_BRACE && char !== CLOSE_BRACKET) {
          counts[depth] = 1;
          values += 1;
        }
      }
      if (char === QUOTE) {
        inString = true;
      } else if (char === OPEN_BRACE || char === OPEN_BRACKET) {
        depth += 1;
        if (depth > limit) {
          problem = 'depth';
          break;
        }
        objects[depth] = char === OPEN_BRACE ? 1 : 0;
        counts[depth] = 0;
        opened = true;
      } else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) {
        if (depth > 0) depth -= 1;
      } else if (char === COMMA && depth > 0) {
        counts[depth] = counts[depth]! + 1;
        values += 1;
        if (objects[depth] === 1 && counts[depth]! > maxMembers) {
          problem = 'members';
          break;
        }
      }
      if (values > maxValues) {
        problem = 'values';
        break;
      }
    }
    Object.assign(this, { depth, inString, escaped, opened, values });
    if (problem) this.problem = problem;
    return problem !== null;
  }
}

/** The limit a JSON text passes (see `JsonDepthGauge`), or null. */
export const jsonShapeProblem = (text: string, limit = MAX_JSON_DEPTH): JsonShapeProblem | null => {
  const gauge = new JsonDepthGauge(limit);
  return gauge.exceeded(text) ? gauge.problem : null;
};

/** Whether the JSON text nests arrays and objects deeper than `limit` (see `JsonDepthGauge`). */
export const nestsDeeperThan = (text: string, limit = MAX_JSON_DEPTH): boolean =>
  jsonShapeProblem(text, limit) === 'depth';

/** The 400 of a JSON text nested too deep, naming `field` (`body`, `variables`) and the limit. */
export const tooDeep = (field: string) =>
  badRequest(`${field} nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`, [
    { field, message: `nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels` },
  ]);

/** The 400 of a JSON text past one of its limits, naming `field` and the limit. */
export const shapeRefusal = (problem: JsonShapeProblem, field: string) => {
  if (problem === 'depth') return tooDeep(field);
  const message =
    problem === 'members'
      ? `has an object with more than ${MAX_JSON_MEMBERS} members`
      : `holds more than ${MAX_JSON_VALUES} values (array elements and object members)`;
  return badRequest(`${field} ${message}`, [{ field, message }]);
};

const notJson = (field: string) =>
  badRequest(`${field === 'body' ? 'the request body' : field} is not valid JSON`, [
    { field, message: 'is not valid JSON' },
  ]);

/**
 * Parses JSON a client sent outside Fastify's body parser (a JSON body under another media type,
 * a query parameter carrying JSON): refused when it nests too deep, then parsed.
 */
export function parseClientJson(text: string, field = 'body'): unknown {
  const problem = jsonShapeProblem(text);
  if (problem) throw shapeRefusal(problem, field);
  try {
    return JSON.parse(text);
  } catch {
    throw notJson(field);
  }
}

/**
 * Replaces Fastify's `application/json` parser (on `app` and so on every scope below it) by one
 * that measures the shape of the body as its bytes arrive (nesting, members per object, values),
 * refusing it at the first level too deep, member or value too many, without reading the rest
 * (Node discards it), then parses as Fastify does, refusing `__proto__` and
 * `constructor.prototype` members (secure-json-parse), within `bodyLimit` bytes.
 */
export function installJsonBodyDoor(app: FastifyInstance, bodyLimit: number, senders: HostileSenders) {
  // A refused body is not read further: the connection ends with the answer, and the kernel drops the rest.
  const refusedUnread = new WeakSet<object>();
  app.addHook('onSend', async (request, reply) => {
    if (refusedUnread.has(request.raw)) reply.header('connection', 'close');
  });
  const parseSecurely = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (request, payload, done) => {
    if (Number(request.headers['content-length']) > bodyLimit) return done(new AppError('PAYLOAD_TOO_LARGE'));
    const gauge = new JsonDepthGauge();
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (error: Error | null, hostile = false) => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onEnd);
      if (error) payload.pause();
      if (hostile) {
        refusedUnread.add(request.raw);
        return senders.refused(request.ip, () => done(error, undefined));
      }
      if (error) return done(error, undefined);
      parseSecurely(request, Buffer.concat(chunks, received).toString('utf8'), done);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > bodyLimit) return finish(new AppError('PAYLOAD_TOO_LARGE'));
      if (gauge.exceeded(chunk)) return finish(shapeRefusal(gauge.problem!, 'body'), true);
      chunks.push(chunk);
    };
    const onEnd = (error?: Error) => finish(error ? badRequest('the request body was not received whole') : null);
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onEnd);
    payload.resume();
  });
}

/** The most query parameters (or form fields) a request may carry; the API documents under 20 per operation. */
export const MAX_PARAMETERS = 256;
/** The longest name of a query parameter or form field. */
export const MAX_PARAMETER_NAME_LENGTH = 256;
/** The most bracket levels in a parameter's name: `filter[field][op]` has 2. */
export const MAX_PARAMETER_BRACKETS = 4;

/**
 * The 400 of parameters past the limits, or null: at most `MAX_PARAMETERS` of them, each name at
 * most `MAX_PARAMETER_NAME_LENGTH` characters and `MAX_PARAMETER_BRACKETS` bracket levels deep.
 * `names` yields each parameter's name once per occurrence; `section` is `query` or `body`.
 */
export function parameterProblem(names: Iterable<string>, section: 'query' | 'body') {
  let count = 0;
  for (const name of names) {
    count += 1;
    if (count > MAX_PARAMETERS)
      return badRequest(`${section} has more than ${MAX_PARAMETERS} parameters`, [
        { field: section, message: `has more than ${MAX_PARAMETERS} parameters` },
      ]);
    if (name.length > MAX_PARAMETER_NAME_LENGTH)
      return badRequest(`${section} has a parameter name longer than ${MAX_PARAMETER_NAME_LENGTH} characters`, [
        { field: section, message: `has a parameter name longer than ${MAX_PARAMETER_NAME_LENGTH} characters` },
      ]);
    if (bracketLevels(name) > MAX_PARAMETER_BRACKETS)
      return badRequest(`${section} has a parameter name nested deeper than ${MAX_PARAMETER_BRACKETS} brackets`, [
        {
          field: `${section}.${name}`,
          message: `is nested deeper than ${MAX_PARAMETER_BRACKETS} brackets`,
        },
      ]);
  }
  return null;
}

const bracketLevels = (name: string) => {
  let levels = 0;
  for (let index = name.indexOf('['); index !== -1; index = name.indexOf('[', index + 1)) levels += 1;
  return levels;
};

/** The names of a raw query string's parameters, one per occurrence (`a=1&a=2&b` → a, a, b), without decoding. */
export function* queryParameterNames(url: string): Generator<string> {
  const start = url.indexOf('?');
  if (start === -1 || start === url.length - 1) return;
  let from = start + 1;
  while (from <= url.length) {
    let end = url.indexOf('&', from);
    if (end === -1) end = url.length;
    if (end > from) {
      const equals = url.indexOf('=', from);
      yield decodeName(url.slice(from, equals !== -1 && equals < end ? equals : end));
    }
    from = end + 1;
  }
}

const decodeName = (raw: string) => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
};
