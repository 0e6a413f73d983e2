/**
 * The limits a request meets at the door, before any other work on it. Every JSON text a client
 * sends comes through here (REST and GraphQL bodies, JSON sent under another declared media type):
 * its nesting is measured on the text, in one pass, before it is parsed, so a body nested 100 000
 * levels deep is refused without building 100 000 objects and before any walk of it (validation,
 * the text rule, hashing, logging) could cost more than its size. Query strings and form bodies
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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Measures the nesting of a JSON text fed piece by piece, as its bytes arrive: its structural
 * characters are ASCII, which never occur inside a multi-byte UTF-8 sequence, so undecoded bytes
 * can be scanned. One pass, skipping strings (and the characters escaped in them); text that is
 * not JSON may be answered either way, and the parser refuses it next.
 */
export class JsonDepthGauge {
  private depth = 0;
  private inString = false;
  private escaped = false;

  constructor(private readonly limit = MAX_JSON_DEPTH) {}

  /** Feeds the next piece of the text; true once it nests deeper than the limit. */
  exceeded(piece: Uint8Array | string): boolean {
    const text = typeof piece === 'string';
    let { depth, inString, escaped } = this;
    const length = piece.length;
    for (let index = 0; index < length; index += 1) {
      const char = text ? (piece as string).charCodeAt(index) : (piece as Uint8Array)[index]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (char === BACKSLASH) escaped = true;
        else if (char === QUOTE) inString = false;
      } else if (char === QUOTE) {
        inString = true;
      } else if (char === OPEN_BRACE || char === OPEN_BRACKET) {
        depth += 1;
        if (depth > this.limit) return true;
      } else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) {
        depth -= 1;
      }
    }
    Object.assign(this, { depth, inString, escaped });
    return false;
  }
}

/** Whether the JSON text nests arrays and objects deeper than `limit` (see `JsonDepthGauge`). */
export const nestsDeeperThan = (text: string, limit = MAX_JSON_DEPTH): boolean =>
  new JsonDepthGauge(limit).exceeded(text);

/** The 400 of a JSON text nested too deep, naming `field` (`body`, `variables`) and the limit. */
export const tooDeep = (field: string) =>
  badRequest(`${field} nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`, [
    { field, message: `nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels` },
  ]);

const notJson = (field: string) =>
  badRequest(`${field === 'body' ? 'the request body' : field} is not valid JSON`, [
    { field, message: 'is not valid JSON' },
  ]);

/**
 * Parses JSON a client sent outside Fastify's body parser (a JSON body under another media type,
 * a query parameter carrying JSON): refused when it nests too deep, then parsed.
 */
export function parseClientJson(text: string, field = 'body'): unknown {
  if (nestsDeeperThan(text)) throw tooDeep(field);
  try {
    return JSON.parse(text);
  } catch {
    throw notJson(field);
  }
}

/**
 * Replaces Fastify's `application/json` parser (on `app` and so on every scope below it) by one
 * that measures the nesting of the body as its bytes arrive, refusing it at the first level too
 * deep without reading the rest (Node discards it), then parses as Fastify does, refusing
 * `__proto__` and `constructor.prototype` members (secure-json-parse), within `bodyLimit` bytes.
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
      if (gauge.exceeded(chunk)) return finish(tooDeep('body'), true);
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
