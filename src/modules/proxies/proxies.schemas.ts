import { z } from '../../kernel/rest/schemas';
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from '../../kernel/validation';
import { SCOPES } from '../../kernel/scopes';
import { PROXY_EXAMPLE, PROXY_INPUT_EXAMPLE } from './proxies.examples';

/**
 * Lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63 characters: a DNS
 * label, so a key can also serve as a subdomain.
 */
export const PROXY_KEY_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export const ProxyKey = z
  .string()
  .max(63)
  .regex(PROXY_KEY_PATTERN, 'must be 1-63 lowercase letters, digits or hyphens, not starting or ending with a hyphen')
  .openapi({
    description:
      'Unique URL identifier of the proxy (globally unique): 1-63 of `a-z`, `0-9` and `-`, not starting or ending ' +
      'with `-`.',
    example: 'my-shop',
  });

/** A host must follow the scheme's "//": the URL parser would otherwise read "https:///path" as host "path". */
const HTTP_URL_START = '^https?://[^/?#]';
const httpUrlStart = new RegExp(HTTP_URL_START);

const httpUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    if (!httpUrlStart.test(value) || !isStorableText(value)) return false;
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an absolute http(s) URL')
  .openapi({ format: 'uri', pattern: HTTP_URL_START });

const nullableBoolean = z.boolean().nullable().optional();

/** Bounds of a route's cache-key rule: its lists are walked on every request the route serves. */
export const MAX_KEY_PARAMETERS = 100;
export const MAX_KEY_HEADERS = 20;
const MAX_KEY_NAME_LENGTH = 128;

const QueryParameterPattern = z
  .string()
  .min(1)
  .max(MAX_KEY_NAME_LENGTH)
  // eslint-disable-next-line no-control-regex
  .regex(/^[^&=#*\u0000-\u001f\u007f]+\*?$|^\*$/, 'must be a parameter name, optionally ending with "*"')
  .refine(isStorableText, UNSTORABLE_TEXT_MESSAGE);
const parameterList = z.array(QueryParameterPattern).max(MAX_KEY_PARAMETERS).nullable().optional();

/** RFC 9110 token characters. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HeaderName = z
  .string()
  .min(1)
  .max(MAX_KEY_NAME_LENGTH)
  .regex(TOKEN, 'must be a header name')
  .transform((name) => name.toLowerCase())
  .refine((name) => name !== 'authorization' && name !== 'cookie', 'must not be Authorization or Cookie (use cookies)');
const CookieName = z.string().min(1).max(MAX_KEY_NAME_LENGTH).regex(TOKEN, 'must be a cookie name');

export const CacheKeySettings = z
  .object({
    ignore_query: parameterList.openapi({
      description:
        `Query parameters left out of the cache key (at most ${MAX_KEY_PARAMETERS}); \`name*\` stands for every ` +
        'parameter starting with `name`.',
      example: ['session', 'ref*'],
    }),
    only_query: parameterList.openapi({
      description: 'Only these query parameters (same patterns) take part in the cache key; the others are ignored.',
      example: ['page', 'sort'],
    }),
    ignore_tracking_query: nullableBoolean.openapi({
      description:
        'Leave click and campaign identifiers out of the cache key: `utm_*`, `gclid`, `gclsrc`, `dclid`, `gbraid`, ' +
        '`wbraid`, `fbclid`, `msclkid`, `yclid`, `twclid`, `ttclid`, `li_fat_id`, `igshid`, `mc_cid`, `mc_eid`, ' +
        '`_ga`, `_gl`, `_hsenc`, `_hsmi`, `mkt_tok`.',
    }),
    sort_query: nullableBoolean.openapi({
      description: 'Sort the query parameters by name in the cache key (repeated names keep their order).',
    }),
    headers: z
      .array(HeaderName)
      .max(MAX_KEY_HEADERS)
      .nullable()
      .optional()
      .openapi({
        description: `Request headers whose values are added to the cache key (at most ${MAX_KEY_HEADERS}).`,
        example: ['x-country'],
      }),
    cookies: z
      .array(CookieName)
      .max(MAX_KEY_HEADERS)
      .nullable()
      .optional()
      .openapi({
        description: `Cookies whose values are added to the cache key (at most ${MAX_KEY_HEADERS}).`,
        example: ['currency'],
      }),
    origin_query: z
      .enum(['sent', 'keyed'])
      .nullable()
      .optional()
      .openapi({
        description:
          'What the origin receives: `sent` (the default) the query as the client sent it, `keyed` the query as ' +
          'the cache key holds it (ignored parameters removed, sorted when `sort_query`).',
      }),
  })
  .strict()
  .refine((key) => key.ignore_query == null || key.only_query == null, {
    message: 'takes ignore_query or only_query, not both',
  })
  .openapi('ProxyCacheKeySettings');

export const MAX_COMPRESSION_MIN_BYTES = 16 * 1024 * 1024;

export const CompressionSettings = z
  .object({
    is_enabled: nullableBoolean.openapi({
      description:
        'Compress stored responses of text-like types (`text/*`, JSON, JavaScript, XML, SVG, ...) with gzip and ' +
        "brotli, answered as the client's `Accept-Encoding` asks, with `Vary: Accept-Encoding`. Responses the " +
        'origin encoded itself or marked `no-transform` are left as they are. Default false.',
    }),
    min_bytes: z
      .int()
      .min(0)
      .max(MAX_COMPRESSION_MIN_BYTES)
      .nullable()
      .optional()
      .openapi({ description: 'Smallest body compressed, in bytes; default 1024.' }),
  })
  .strict()
  .openapi('ProxyCompressionSettings');

export const CacheSettings = z
  .object({
    age: z
      .int()
      .min(0)
      .max(31_536_000)
      .nullable()
      .optional()
      .openapi({ description: 'Seconds to cache for (at most one year).' }),
    is_as_origin: nullableBoolean.openapi({
      description: "Follow the origin's Cache-Control/Expires instead of `age`.",
    }),
    is_public: nullableBoolean.openapi({ description: 'Send `Cache-Control: public` (true) or `private` to clients.' }),
    stale_while_revalidate: z
      .int()
      .min(0)
      .max(31_536_000)
      .nullable()
      .optional()
      .openapi({
        description:
          'Seconds after `age` has run out during which the stored response is still served at once ' +
          '(`X-Cache: STALE`) while one request in the background refreshes it. With `is_as_origin` the ' +
          "origin's `Cache-Control: stale-while-revalidate` applies instead.",
      }),
    key: CacheKeySettings.nullable()
      .optional()
      .openapi({ description: 'How the cache key is made from the request: query parameters, headers, cookies.' }),
    compression: CompressionSettings.nullable().optional(),
  })
  .strict()
  .openapi('ProxyCacheSettings');

export const AuthSettings = z
  .object({
    is_required: nullableBoolean.openapi({
      description: "Whether requests need a bearer token of the proxy's tenant.",
    }),
    scope: z.enum(SCOPES).nullable().optional().openapi({ description: 'Scope the bearer token must carry.' }),
  })
  .strict()
  .openapi('ProxyAuthSettings');

export const MAX_IMAGE_SIZES = 50;
const MAX_INPUT_PIXELS = 268_402_689;

export const ImageSettings = z
  .object({
    is_enabled: nullableBoolean.openapi({
      description:
        'Transform images on this route when the URL asks: `w` and `h` (pixels, 1-4096), `fit` (`cover`, ' +
        '`contain`, `fill`, `inside`, `outside`), `format` (`webp`, `avif`, `jpeg`, `png`, or `auto` from the ' +
        "client's `Accept`) and `q` (quality 1-100). Variants are cached beside their source and purged with it.",
    }),
    sizes: z
      .array(z.string().regex(/^\d{1,4}x\d{1,4}$/, 'must be <width>x<height>, e.g. 400x300 (0 for either side: auto)'))
      .max(MAX_IMAGE_SIZES)
      .nullable()
      .optional()
      .openapi({
        description:
          `Sizes allowed without a signed URL (at most ${MAX_IMAGE_SIZES}), as \`<w>x<h>\` with 0 for a side left ` +
          'out of the URL. Other sizes need `expires` and `signature`: the hex HMAC-SHA256, keyed with ' +
          '`auth.signature.secret`, of `<path>?<options>` + "\\n" + `<expires>`, `<options>` being the given ' +
          'options among `w`, `h`, `fit`, `format`, `q` in that order, e.g. `/a.jpg?w=640&format=webp`.',
        example: ['200x200', '640x0'],
      }),
    max_input_pixels: z
      .int()
      .min(1)
      .max(MAX_INPUT_PIXELS)
      .nullable()
      .optional()
      .openapi({
        description:
          'Largest source image decoded (width × height), against decompression bombs; default 40000000. ' +
          'A larger one is a 502.',
      }),
  })
  .strict()
  .openapi('ProxyImageSettings');

const RoutePath = z
  .string()
  .min(1)
  .max(1024)
  .refine(
    // eslint-disable-next-line no-control-regex
    (path) => path === '*' || /^\/[^\s\u0000-\u001f\u007f]*$/.test(path),
    'must be "*" or a path starting with "/" without whitespace',
  )
  .refine(isStorableText, UNSTORABLE_TEXT_MESSAGE)
  .openapi({ description: 'Input path prefix, or `*` for the wildcard route.', example: '/images' });

export const Route = z
  .object({
    path: RoutePath,
    origin: z
      .object({
        uri: httpUrl.openapi({ description: 'Target URL the path maps onto.' }),
        is_bucket: nullableBoolean.openapi({ description: 'Whether the origin is an object storage bucket.' }),
      })
      .strict(),
    settings: z
      .object({
        cache: CacheSettings.nullable().optional(),
        auth: AuthSettings.nullable().optional(),
        image: ImageSettings.nullable().optional(),
      })
      .strict()
      .nullable()
      .optional(),
  })
  .strict()
  .openapi('ProxyRoute');

export const MAX_ROUTES = 100;

const Routes = z
  .union([Route, z.array(Route).min(1).max(MAX_ROUTES)])
  .superRefine((routes, ctx) => {
    const paths = (Array.isArray(routes) ? routes : [routes]).map((route) => route.path);
    const duplicate = paths.find((path, index) => paths.indexOf(path) !== index);
    if (duplicate) ctx.addIssue({ code: 'custom', message: `route path "${duplicate}" appears twice` });
  })
  .openapi({
    description:
      `One route object, or an array of 1 to ${MAX_ROUTES} routes with distinct paths. Responses return ` +
      `the form that was sent.`,
  });

const ProxyAuth = z
  .object({
    signature: z
      .object({
        secret: z
          .string()
          .min(16)
          .max(256)
          .refine(isStorableText, UNSTORABLE_TEXT_MESSAGE)
          .nullable()
          .optional()
          .openapi({ description: 'Secret that signs wildcard-route URLs (16-256 characters).' }),
        cache: CacheSettings.nullable().optional(),
        auth: AuthSettings.nullable().optional(),
      })
      .strict()
      .nullable()
      .optional(),
  })
  .strict()
  .openapi('ProxyAuth');

const ProxyOAuth = z
  .object({
    issuer: httpUrl.nullable().optional().openapi({ description: 'Issuer of the tokens the proxy accepts.' }),
    client_id: z.string().min(1).max(200).refine(isStorableText, UNSTORABLE_TEXT_MESSAGE).nullable().optional(),
    authorize_url: httpUrl
      .nullable()
      .optional()
      .openapi({ description: 'Where browsers without a token are sent to log in.' }),
    return_url_key: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/)
      .nullable()
      .optional()
      .openapi({ description: 'Query parameter that carries the original URL to `authorize_url`.' }),
  })
  .strict()
  .openapi('ProxyOAuth');

const readOnlyFields = {
  tenant_id: z
    .string()
    .optional()
    .openapi({ readOnly: true, description: "Ignored on input: the tenant is the caller's." }),
  created_at: z.string().nullable().optional().openapi({ readOnly: true, description: 'Ignored on input.' }),
  updated_at: z.string().nullable().optional().openapi({ readOnly: true, description: 'Ignored on input.' }),
};

const proxyFields = {
  routes: Routes,
  auth: ProxyAuth.nullable().optional(),
  oauth: ProxyOAuth.nullable().optional(),
  is_active: nullableBoolean.openapi({ description: 'Whether the proxy serves traffic; default true.' }),
  is_suspended: nullableBoolean.openapi({
    description: 'Whether the proxy is suspended (answers 403); default false.',
  }),
  ...readOnlyFields,
};

export const ProxyCreateInput = z
  .object({ key: ProxyKey, ...proxyFields })
  .strict()
  .openapi('ProxyInput', { example: PROXY_INPUT_EXAMPLE });
export const ProxyReplaceInput = z
  .object({
    key: ProxyKey.optional().openapi({ description: 'If sent, must equal the key in the path.' }),
    ...proxyFields,
  })
  .strict()
  .openapi('ProxyReplaceInput', { example: PROXY_INPUT_EXAMPLE });

export type ProxyInput = z.output<typeof ProxyReplaceInput>;

const CacheKeyOut = z.object({
  ignore_query: z.array(z.string()).nullable(),
  only_query: z.array(z.string()).nullable(),
  ignore_tracking_query: z.boolean().nullable(),
  sort_query: z.boolean().nullable(),
  headers: z.array(z.string()).nullable(),
  cookies: z.array(z.string()).nullable(),
  origin_query: z.enum(['sent', 'keyed']).nullable(),
});
const CacheOut = z.object({
  age: z.int().nullable(),
  is_as_origin: z.boolean().nullable(),
  is_public: z.boolean().nullable(),
  stale_while_revalidate: z.int().nullable(),
  key: CacheKeyOut.nullable(),
  compression: z.object({ is_enabled: z.boolean().nullable(), min_bytes: z.int().nullable() }).nullable(),
});
const AuthOut = z.object({ is_required: z.boolean().nullable(), scope: z.string().nullable() });
const RouteOut = z
  .object({
    path: z.string(),
    origin: z.object({ uri: z.string(), is_bucket: z.boolean().nullable() }),
    settings: z.object({
      cache: CacheOut,
      auth: AuthOut,
      image: z
        .object({
          is_enabled: z.boolean().nullable(),
          sizes: z.array(z.string()).nullable(),
          max_input_pixels: z.int().nullable(),
        })
        .nullable(),
    }),
  })
  .openapi('ProxyRouteOutput');

export const ProxyOutput = z
  .object({
    key: z.string(),
    routes: z.union([RouteOut, z.array(RouteOut)]),
    auth: z.object({ signature: z.object({ secret: z.string().nullable(), cache: CacheOut, auth: AuthOut }) }),
    oauth: z.object({
      issuer: z.string().nullable(),
      client_id: z.string().nullable(),
      authorize_url: z.string().nullable(),
      return_url_key: z.string().nullable(),
    }),
    is_active: z.boolean(),
    is_suspended: z.boolean(),
    tenant_id: z.uuid(),
    created_at: z.iso.datetime().openapi({ description: 'ISO 8601 UTC timestamp.' }),
    updated_at: z.iso.datetime().openapi({ description: 'ISO 8601 UTC timestamp.' }),
  })
  .openapi('Proxy', { example: PROXY_EXAMPLE });

export type ProxyRecord = z.output<typeof ProxyOutput>;
