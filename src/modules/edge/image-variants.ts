/**
 * Transformed variants of an image route's images: made from the source as the cache serves it,
 * stored beside it with its tags (so that a purge of the source by path or tag takes them too),
 * made once however many clients ask at the same time.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { AppError } from '../../kernel/errors';
import type { CacheStatus, EdgeRequest, EdgeResponse } from './edge.types';
import {
  authorizeImage,
  DEFAULT_MAX_INPUT_PIXELS,
  IMAGE_CONTENT_TYPES,
  IMAGE_PARAMETERS,
  imageRequestOf,
  outputFormat,
  type ImageRequest,
  sourceFormat,
  transformImage,
  type EdgeImageSettings,
} from './images';
import type { CachedResponse, ResponseCache } from './response-cache';
import { withoutQueryParameters } from './routing';
import { EXPIRES_PARAMETER, SIGNATURE_PARAMETER, signatureParameters } from './signature';

/** The largest source image read, in bytes. */
const MAX_SOURCE_BYTES = 64 * 1024 * 1024;

/** Request headers the source is not fetched with: the variant needs the whole, unencoded image. */
const NOT_FOR_THE_SOURCE = new Set(['if-none-match', 'if-modified-since', 'range', 'if-range', 'accept-encoding']);

/** What the variants need of the service. */
export interface ImageHost {
  cache: ResponseCache;
  /** Bumped by every purge. */
  purges(): number;
  /** Answers the source request through the cache. */
  source(request: EdgeRequest): Promise<EdgeResponse>;
  /** The entry under the source's cache key, once fetched. */
  sourceEntry(request: EdgeRequest): CachedResponse | undefined;
  fromCache(entry: CachedResponse, request: EdgeRequest, status: CacheStatus): EdgeResponse;
}

export interface ImageRoute {
  settings: EdgeImageSettings;
  /** Proxy key and normalised path, as the cache key starts. */
  keyPrefix: string;
  path: string;
  secret: string | null;
  /** Seconds a variant is kept when its source is not cached. */
  age: number;
  visibility: 'public' | 'private';
}

async function collect(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > MAX_SOURCE_BYTES) {
      body.destroy();
      throw new AppError('BAD_GATEWAY', `the origin's image exceeds ${MAX_SOURCE_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The query of a transform request's source: without the transform options and the signature. */
const sourceQueryOf = (query: string) =>
  withoutQueryParameters(query, [...IMAGE_PARAMETERS, EXPIRES_PARAMETER, SIGNATURE_PARAMETER]);

/** A variant's cache key up to its format: the source's path and query, then the options. */
const variantKeyBase = (keyPrefix: string, sourceQuery: string, image: ImageRequest) =>
  `${keyPrefix}?${sourceQuery}\nimage ${image.canonical} `;

/** The last part of a variant's key: its format, or with `auto` what of `Accept` decides it. */
export const formatKey = (image: { format: string }, accept: string | string[] | undefined) =>
  image.format === 'auto' ? acceptKey(accept) : image.format;

/**
 * For answering variant hits before the service: the key of a transform URL up to its format, and
 * the format (null: `auto`, decided per request by `formatKey`). Null when the URL needs checks
 * made per request: malformed options, or a size not on the route's list (a signed URL, whose
 * expiry passes).
 */
export function listedVariantKey(
  keyPrefix: string,
  query: string,
  settings: EdgeImageSettings,
): { base: string; format: string | null } | null {
  let image: ImageRequest;
  try {
    image = imageRequestOf(query);
  } catch {
    return null;
  }
  if (!(settings.sizes ?? []).includes(`${image.width ?? 0}x${image.height ?? 0}`)) return null;
  return {
    base: variantKeyBase(keyPrefix, sourceQueryOf(query), image),
    format: image.format === 'auto' ? null : image.format,
  };
}

/** The format key of an `auto` request: what of the client's `Accept` the answer depends on. */
function acceptKey(accept: string | string[] | undefined): string {
  const value = Array.isArray(accept) ? accept.join(',') : (accept ?? '');
  return value.includes('image/avif') ? 'avif' : value.includes('image/webp') ? 'webp' : 'other';
}

export class ImageVariants {
  private readonly making = new Map<string, Promise<CachedResponse>>();

  constructor(private readonly host: ImageHost) {}

  /** Answers a transform request of an image route: 400 for bad options, 403 for a size not allowed. */
  async serve(request: EdgeRequest, query: string, route: ImageRoute): Promise<EdgeResponse> {
    const image = imageRequestOf(query);
    const { expires, signature } = signatureParameters(query);
    authorizeImage(route.settings, image, route.path, { secret: route.secret, expires, signature });
    const sourceQuery = sourceQueryOf(query);
    const key = variantKeyBase(route.keyPrefix, sourceQuery, image) + formatKey(image, request.headers.accept);
    const now = Date.now();
    const cached = this.host.cache.get(key, now);
    if (cached !== undefined && cached.freshUntil > now) return this.host.fromCache(cached, request, 'HIT');

    const headers: IncomingHttpHeaders = {};
    for (const name in request.headers) if (!NOT_FOR_THE_SOURCE.has(name)) headers[name] = request.headers[name];
    const sourceRequest: EdgeRequest = { ...request, method: 'GET', query: sourceQuery, headers };
    let making = this.making.get(key);
    const owner = making === undefined;
    if (making === undefined) {
      making = this.make(key, sourceRequest, image, route);
      this.making.set(key, making);
      making.then(
        () => this.making.delete(key),
        () => this.making.delete(key),
      );
    }
    let entry: CachedResponse;
    try {
      entry = await making;
    } catch (error) {
      // The source's own answer (a 404, a redirect) goes to the client as it is; its body can be read once.
      if (error instanceof SourceAnswer) return owner ? error.answer : this.host.source(sourceRequest);
      throw error;
    }
    return this.host.fromCache(entry, request, 'MISS');
  }

  private async make(
    key: string,
    sourceRequest: EdgeRequest,
    image: ReturnType<typeof imageRequestOf>,
    route: ImageRoute,
  ): Promise<CachedResponse> {
    const purgesBefore = this.host.purges();
    const answer = await this.host.source(sourceRequest);
    if (answer.status !== 200 || answer.body === undefined) throw new SourceAnswer(answer);
    const source = Buffer.isBuffer(answer.body) ? answer.body : await collect(answer.body);
    const maxPixels = route.settings.max_input_pixels ?? DEFAULT_MAX_INPUT_PIXELS;
    const format = outputFormat(image, sourceRequest.headers.accept, await sourceFormat(source, maxPixels));
    const body = await transformImage(source, image, format, maxPixels);
    const now = Date.now();
    const sourceEntry = this.host.sourceEntry(sourceRequest);
    const freshUntil = sourceEntry?.freshUntil ?? now + route.age * 1000;
    const entry: CachedResponse = {
      status: 200,
      headers: {
        'content-type': IMAGE_CONTENT_TYPES[format],
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
        ...(image.format === 'auto' ? { vary: 'accept' } : {}),
      },
      body,
      storedAt: now,
      initialAgeSeconds: 0,
      freshUntil,
      revalidateUntil: freshUntil,
      staleIfErrorUntil: freshUntil,
      staleUntil: freshUntil,
      visibility: route.visibility,
      varyOn: {},
      tags: sourceEntry?.tags ?? [],
    };
    if (freshUntil > now && this.host.purges() === purgesBefore) this.host.cache.set(key, entry);
    return entry;
  }
}

/** The source answered otherwise than with an image to transform. */
class SourceAnswer extends Error {
  constructor(readonly answer: EdgeResponse) {
    super('the source answered without an image');
  }
}
