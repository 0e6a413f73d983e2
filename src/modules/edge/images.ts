/**
 * Image transforms of image routes: the options a URL asks for (`w`, `h`, `fit`, `format`, `q`),
 * whether it may (an allow-listed size, or a signed URL), and the transform itself with sharp,
 * bounded in input pixels against decompression bombs.
 */
import sharp from 'sharp';
import { AppError } from '../../kernel/errors';
import { headerTokens } from './headers';
import { verifySignature } from './signature';

/** A route's `settings.image` as stored. */
export interface EdgeImageSettings {
  is_enabled?: boolean | null;
  /** Allowed `<width>x<height>` sizes without a signature; 0 leaves a side to the aspect ratio. */
  sizes?: string[] | null;
  /** Largest source image decoded, in pixels (width × height). */
  max_input_pixels?: number | null;
}

export const DEFAULT_MAX_INPUT_PIXELS = 40_000_000;
/** The largest width or height a transform produces. */
export const MAX_IMAGE_DIMENSION = 4096;
export const IMAGE_FITS = ['cover', 'contain', 'fill', 'inside', 'outside'] as const;
export const IMAGE_FORMATS = ['webp', 'avif', 'jpeg', 'png', 'auto'] as const;
type OutputFormat = Exclude<(typeof IMAGE_FORMATS)[number], 'auto'>;

/** The query parameters that ask for a transform, in the order they are signed. */
export const IMAGE_PARAMETERS = ['w', 'h', 'fit', 'format', 'q'] as const;

export interface ImageRequest {
  width?: number;
  height?: number;
  fit: (typeof IMAGE_FITS)[number];
  format: (typeof IMAGE_FORMATS)[number];
  quality?: number;
  /** The options as signed: `w=..&h=..&fit=..&format=..&q=..`, those given, in that order. */
  canonical: string;
}

const bad = (reason: string) => new AppError('BAD_REQUEST', reason);

/** Whether the query names any transform option (and the request is a transform, not the image as it is). */
export function asksForTransform(query: string): boolean {
  if (query === '') return false;
  for (const pair of query.split('&')) {
    const name = pair.slice(0, pair.indexOf('=') === -1 ? undefined : pair.indexOf('='));
    if ((IMAGE_PARAMETERS as readonly string[]).includes(name)) return true;
  }
  return false;
}

/** The transform options of a query; a malformed, repeated or out-of-range option is a 400. */
export function imageRequestOf(query: string): ImageRequest {
  const params = new URLSearchParams(query);
  const value = (name: string) => {
    const all = params.getAll(name);
    if (all.length > 1) throw bad(`the image option "${name}" is given more than once`);
    return all[0];
  };
  const dimension = (name: 'w' | 'h') => {
    const given = value(name);
    if (given === undefined) return undefined;
    if (!/^\d{1,4}$/.test(given) || Number(given) < 1 || Number(given) > MAX_IMAGE_DIMENSION) {
      throw bad(`the image option "${name}" must be an integer from 1 to ${MAX_IMAGE_DIMENSION}`);
    }
    return Number(given);
  };
  const width = dimension('w');
  const height = dimension('h');
  const fit = value('fit') ?? 'cover';
  if (!(IMAGE_FITS as readonly string[]).includes(fit))
    throw bad(`the image option "fit" must be one of ${IMAGE_FITS.join(', ')}`);
  const format = value('format') ?? 'auto';
  if (!(IMAGE_FORMATS as readonly string[]).includes(format)) {
    throw bad(`the image option "format" must be one of ${IMAGE_FORMATS.join(', ')}`);
  }
  const q = value('q');
  if (q !== undefined && (!/^\d{1,3}$/.test(q) || Number(q) < 1 || Number(q) > 100)) {
    throw bad('the image option "q" must be an integer from 1 to 100');
  }
  const canonical = IMAGE_PARAMETERS.filter((name) => params.has(name))
    .map((name) => `${name}=${params.get(name)}`)
    .join('&');
  return {
    width,
    height,
    fit: fit as ImageRequest['fit'],
    format: format as ImageRequest['format'],
    quality: q === undefined ? undefined : Number(q),
    canonical,
  };
}

/**
 * Whether the size may be made: listed in the route's `sizes`, or the URL signed with the proxy's
 * secret over `<path>?<options>` + "\n" + `<expires>`. A 403 otherwise.
 */
export function authorizeImage(
  settings: EdgeImageSettings,
  image: ImageRequest,
  path: string,
  signed: { secret: string | null; expires?: string; signature?: string },
): void {
  const size = `${image.width ?? 0}x${image.height ?? 0}`;
  if ((settings.sizes ?? []).includes(size)) return;
  if (signed.secret !== null && signed.signature !== undefined) {
    const verdict = verifySignature(
      signed.secret,
      `${path}?${image.canonical}`,
      signed.expires,
      signed.signature,
      Math.floor(Date.now() / 1000),
    );
    if (verdict.ok) return;
    throw new AppError('EDGE_SIGNATURE_INVALID', verdict.reason);
  }
  throw new AppError(
    'EDGE_SIGNATURE_INVALID',
    `the image size ${size} is not in the route's sizes: it needs a signed URL`,
  );
}

/** The output format: the one asked for, or with `auto` the best the client's `Accept` takes. */
export function outputFormat(image: ImageRequest, accept: string | string[] | undefined, source: string): OutputFormat {
  if (image.format !== 'auto') return image.format;
  const accepted = headerTokens(accept).map((token) => token.split(';', 1)[0]!.trim());
  if (accepted.includes('image/avif')) return 'avif';
  if (accepted.includes('image/webp')) return 'webp';
  return source === 'png' || source === 'gif' || source === 'svg' ? 'png' : 'jpeg';
}

/** The format of a source image, read from its header only. */
export async function sourceFormat(source: Buffer, maxInputPixels: number): Promise<string> {
  try {
    return (await sharp(source, { limitInputPixels: maxInputPixels }).metadata()).format ?? 'unknown';
  } catch (error) {
    throw originImageError(error);
  }
}

function originImageError(error: unknown): AppError {
  const message = error instanceof Error ? error.message : String(error);
  return new AppError('BAD_GATEWAY', `the origin's image cannot be transformed: ${message}`);
}

/** The transformed image, made on libuv's thread pool; an undecodable or oversized source is a 502. */
export async function transformImage(
  source: Buffer,
  image: ImageRequest,
  format: OutputFormat,
  maxInputPixels: number,
): Promise<Buffer> {
  try {
    const pipeline = sharp(source, { limitInputPixels: maxInputPixels, failOn: 'error' })
      .rotate()
      .resize({ width: image.width, height: image.height, fit: image.fit, withoutEnlargement: true });
    return await pipeline.toFormat(format, image.quality === undefined ? {} : { quality: image.quality }).toBuffer();
  } catch (error) {
    throw originImageError(error);
  }
}

export const IMAGE_CONTENT_TYPES: Record<OutputFormat, string> = {
  webp: 'image/webp',
  avif: 'image/avif',
  jpeg: 'image/jpeg',
  png: 'image/png',
};
