import { z } from 'zod';

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const postgresUrl = z
  .string()
  .refine((value) => /^postgres(ql)?:\/\//.test(value), 'must be a postgres:// or postgresql:// URL');

const otlpProtocol = z.enum(['http/protobuf', 'http/json'], {
  error: 'must be http/protobuf or http/json (traces are exported over HTTP)',
});

const tracesSamplers = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/** An http(s) URL of a server (no query or fragment). */
function isServerUrl(value: string) {
  try {
    const url = new URL(value.trim());
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
}

const configSchema = z.object({
  NODE_ENV: z.string().min(1).optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: postgresUrl.optional(),
  DATABASE_DIRECT_URL: postgresUrl.optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(10),
  DATA_DIR: z.string().min(1).default('./.data'),
  MASTER_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  TYPESENSE_URL: z
    .string()
    .refine(
      (value) => value.split(',').every(isServerUrl),
      'must be the URL of a Typesense node (http or https), or several separated by commas',
    )
    .optional(),
  TYPESENSE_API_KEY: z.string().min(1).optional(),
  TYPESENSE_NEAREST_URL: z.url({ protocol: /^https?$/ }).optional(),
  TYPESENSE_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(10),
  TYPESENSE_RETRIES: z.coerce.number().int().min(0).max(100).optional(),
  TYPESENSE_RETRY_INTERVAL_SECONDS: z.coerce.number().positive().max(60).default(0.1),
  TYPESENSE_HEALTHCHECK_INTERVAL_SECONDS: z.coerce.number().positive().max(3600).default(60),
  SEARCH_DELIVERY_BACKOFF_MS: z.coerce.number().int().min(1).max(3_600_000).default(1_000),
  SEARCH_DELIVERY_MAX_BACKOFF_MS: z.coerce.number().int().min(1).max(86_400_000).default(60_000),
  LOG_LEVEL: z.enum(logLevels).default('info'),
  PUBLIC_BASE_URL: z.url().optional(),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).optional(),
  SEARCH_EVENTS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(300),
  REFUSED_BODY_HOLD_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  SEARCH_ANALYTICS_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  SEARCH_EVENTS_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  RESERVATION_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  CHECKOUT_TTL_MINUTES: z.coerce.number().int().min(1).max(1440).default(30),
  SEARCH_SUGGESTIONS_REFRESH_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
  SEARCH_SUGGESTIONS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(600),
  OAUTH_REFRESH_GRACE_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  OAUTH_JWKS_MAX_AGE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300),
  OAUTH_REGISTRATIONS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(10),
  OAUTH_ALLOW_PRIVATE_CLIENT_METADATA: z.enum(['true', 'false', '1', '0']).default('false'),
  OAUTH_CLIENT_METADATA_CA_FILE: z.string().min(1).optional(),
  SIGN_IN_ACCOUNT_FAILURES: z.coerce.number().int().min(1).max(1000).default(5),
  SIGN_IN_ADDRESS_FAILURES: z.coerce.number().int().min(1).max(1_000_000).default(20),
  SIGN_IN_WINDOW_SECONDS: z.coerce.number().int().min(1).max(43_200).default(900),
  SIGN_IN_LOCK_SECONDS: z.coerce.number().int().min(1).max(604_800).default(900),
  SIGN_IN_MAX_LOCK_SECONDS: z.coerce.number().int().min(1).max(604_800).default(14_400),
  EDGE_DOMAIN: z
    .string()
    .regex(
      /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/,
      'must be a lowercase domain name such as edge.example.com',
    )
    .optional(),
  EDGE_ORIGIN_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(30_000),
  EDGE_CACHE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(256 * 1024 * 1024),
  EDGE_STALE_IF_ERROR_SECONDS: z.coerce.number().int().min(0).max(31_536_000).default(300),
  EDGE_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(1024 * 1024 * 1024),
  EDGE_MAX_REQUEST_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(10 * 1024 * 1024),
  EDGE_ALLOW_PRIVATE_ORIGINS: z.enum(['true', 'false', '1', '0']).default('false'),
  BROADCAST_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(10_000),
  BROADCAST_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(8),
  BROADCAST_DELIVERY_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  BROADCAST_BACKOFF_MS: z.coerce.number().int().min(1).max(3_600_000).default(1_000),
  BROADCAST_ALLOW_PRIVATE_WEBHOOKS: z.enum(['true', 'false', '1', '0']).default('false'),
  // OpenTelemetry's own variables, with their meaning in its specification (only OTLP over HTTP).
  OTEL_SDK_DISABLED: z
    .string()
    .optional()
    .transform((value) => value?.trim().toLowerCase() === 'true'),
  OTEL_TRACES_EXPORTER: z
    .string()
    .transform((value) => value.split(',').map((name) => name.trim()))
    .pipe(z.array(z.enum(['otlp', 'console', 'none'], { error: 'must list otlp, console or none' })))
    .optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default('commerce-platform-api'),
  OTEL_TRACES_SAMPLER: z.enum(tracesSamplers).default('parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
});

export interface Config {
  /** NODE_ENV is `production`: test-only features (the sandbox payment handler) are refused. */
  production: boolean;
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /**
   * A direct (session) connection to the same database, for what needs a session of its own: the
   * notification listener and migrations. Unset: `databaseUrl`, which must then be direct too.
   */
  databaseDirectUrl: string | undefined;
  /** Connections of this process's pool. */
  databasePoolSize: number;
  dataDir: string;
  masterKey: string | undefined;
  /** One Typesense node URL, or several separated by commas; unset: the embedded search engine. */
  typesenseUrl: string | undefined;
  typesenseApiKey: string | undefined;
  typesense: TypesenseClientConfig;
  searchDelivery: SearchDeliveryConfig;
  logLevel: (typeof logLevels)[number];
  publicBaseUrl: string | undefined;
  /** Bearer token `GET /metrics` needs; public when unset. */
  metricsToken: string | undefined;
  /** Requests per minute per credential of a tenant without a limit of its own; unset: no limit. */
  rateLimitPerMinute: number | undefined;
  /** Requests per minute each client address may send to the public search events endpoint. */
  searchEventsPerMinute: number;
  /** How long the answer to a body refused for its nesting waits once its address sent 10 in a minute (0: never). */
  refusedBodyHoldMs: number;
  /** Days search analytics (counts per query and hour, clicks, events) are kept; housekeeping deletes the rest. */
  searchAnalyticsRetentionDays: number;
  /**
   * Days the raw clicks and events of a search are kept (at most searchAnalyticsRetentionDays);
   * housekeeping then keeps only their counts.
   */
  searchEventsRetentionDays: number;
  /** Days a removed, expired or converted reservation (and its items) is kept after its release. */
  reservationRetentionDays: number;
  /** Minutes a checkout (and the hold of its lines) lives after its last change. */
  checkoutTtlMinutes: number;
  /** Seconds a process serves the query suggestions of an index before rebuilding them from the search log. */
  searchSuggestionsRefreshSeconds: number;
  /** Requests per minute each client address may send to the public query suggestions endpoint. */
  searchSuggestionsPerMinute: number;
  oauth: OAuthConfig;
  /** Dynamic client registrations (RFC 7591) each client address may make per minute. */
  oauthRegistrationsPerMinute: number;
  edge: EdgeConfig;
  broadcasts: BroadcastConfig;
  signInThrottle: SignInThrottleConfig;
  tracing: TracingConfig;
}

/** How each process talks to the nodes of TYPESENSE_URL (settings of the `typesense` client). */
export interface TypesenseClientConfig {
  /** A node asked first while it answers (one in the same zone as the process). */
  nearestUrl: string | undefined;
  /** How long one request to one node may take. */
  timeoutSeconds: number;
  /**
   * Further tries of a request that failed with a 5xx, a timeout or a network error, each on the
   * next node; unset: one per node, at least 2.
   */
  retries: number | undefined;
  retryIntervalSeconds: number;
  /** How long a node that failed is left out of the rotation. */
  healthcheckIntervalSeconds: number;
}

/** Retries of deliveries to the search engine that failed: exponential from `backoffMs`, capped at `maxBackoffMs`. */
export interface SearchDeliveryConfig {
  backoffMs: number;
  maxBackoffMs: number;
}

/** The authorization server's timing. */
export interface OAuthConfig {
  /** How long after its rotation a refresh token may be presented again without revoking its grant. */
  refreshGraceSeconds: number;
  /** How long verifiers may cache the JWKS; a new signing key is published this long before it signs. */
  jwksMaxAgeSeconds: number;
  /** Client ID Metadata Documents may be fetched from loopback and private addresses. */
  allowPrivateClientMetadata: boolean;
  /** A PEM file of certificate authorities trusted for Client ID Metadata Documents, beside Node's. */
  clientMetadataCaFile: string | undefined;
}

/**
 * Sign-in throttling of the login page, after Keycloak's brute-force detection: failed sign-ins are
 * counted in PostgreSQL per account and per client address, and too many within the window lock
 * sign-in for a while, each further lock twice as long as the one before, up to a maximum.
 */
export interface SignInThrottleConfig {
  /** Failed sign-ins of one account (a tenant's e-mail address, existing or not) within the window that lock it. */
  accountFailures: number;
  /** Failed sign-ins from one client address (IPv6: its /64) to one tenant within the window that lock it. */
  addressFailures: number;
  /** How long failures are counted together, in seconds. */
  windowSeconds: number;
  /** How long the first lock lasts, in seconds. */
  lockSeconds: number;
  /** The longest a lock may grow to, in seconds. */
  maxLockSeconds: number;
}

/** Delivery of stock quantities to sales channel webhooks. */
export interface BroadcastConfig {
  /** How long a channel may take to answer one delivery. */
  timeoutMs: number;
  /** Deliveries tried before the broadcast is FAILING. */
  maxAttempts: number;
  /** Wait before the first retry; doubled after each failed attempt. */
  backoffMs: number;
  /** Days a PROCESSED or FAILING delivery is kept after its last attempt. */
  retentionDays: number;
  /** Whether webhooks on loopback, private, link-local and metadata addresses are allowed. */
  allowPrivateWebhooks: boolean;
}

/** The edge proxy data plane. */
export interface EdgeConfig {
  /** Requests for host `{key}.{domain}` are served by proxy `key`; undefined: only `/edge/{key}/...`. */
  domain: string | undefined;
  /** How long an origin may take to answer (connect and headers), and stay silent while sending the body. */
  originTimeoutMs: number;
  /** Upper bound of the response cache of one process, in bytes of stored bodies and headers. */
  cacheMaxBytes: number;
  /** How long after expiry a cached response may still be served when the origin fails. */
  staleIfErrorSeconds: number;
  /** Largest origin response body passed on; larger ones are refused (502) or cut off. */
  maxResponseBytes: number;
  /** Largest request body passed on to an origin; larger ones are refused (413). */
  maxRequestBytes: number;
  /** Whether origins on loopback, private, link-local and metadata addresses are allowed. */
  allowPrivateOrigins: boolean;
}

/** OpenTelemetry traces, from the standard `OTEL_*` variables. */
export interface TracingConfig {
  /** Where finished spans go; none (no exporter configured, or OTEL_SDK_DISABLED): tracing is off. */
  exporters: ('otlp' | 'console')[];
  /** The OTLP/HTTP URL spans are posted to (`…/v1/traces`). */
  otlpUrl: string;
  otlpProtocol: 'http/protobuf' | 'http/json';
  /** `service.name` of every span. */
  serviceName: string;
  sampler: (typeof tracesSamplers)[number];
  /** The share of traces the `traceidratio` samplers keep (0 to 1). */
  samplerRatio: number;
}

export class ConfigError extends Error {}

function searchDeliveryConfig(values: z.output<typeof configSchema>): SearchDeliveryConfig {
  if (values.SEARCH_DELIVERY_MAX_BACKOFF_MS < values.SEARCH_DELIVERY_BACKOFF_MS) {
    throw new ConfigError(
      'Invalid configuration: SEARCH_DELIVERY_MAX_BACKOFF_MS must be at least SEARCH_DELIVERY_BACKOFF_MS ' +
        `(${values.SEARCH_DELIVERY_BACKOFF_MS})`,
    );
  }
  return { backoffMs: values.SEARCH_DELIVERY_BACKOFF_MS, maxBackoffMs: values.SEARCH_DELIVERY_MAX_BACKOFF_MS };
}

/** Every environment variable the service reads (docs/reference/configuration.md describes each). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(configSchema.shape);

/** Parses the service configuration from environment variables; the only reader of `process.env`. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(
    CONFIG_VARIABLES.filter((name) => env[name] !== undefined && env[name] !== '').map((name) => [name, env[name]]),
  );
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  const values = parsed.data;
  if (values.DATABASE_DIRECT_URL && !values.DATABASE_URL)
    throw new ConfigError(
      'Invalid configuration: DATABASE_DIRECT_URL goes with DATABASE_URL (the embedded database is direct)',
    );
  return {
    production: values.NODE_ENV?.trim().toLowerCase() === 'production',
    port: values.PORT,
    host: values.HOST,
    databaseUrl: values.DATABASE_URL,
    databaseDirectUrl: values.DATABASE_DIRECT_URL,
    databasePoolSize: values.DATABASE_POOL_SIZE,
    dataDir: values.DATA_DIR,
    masterKey: values.MASTER_KEY,
    typesenseUrl: values.TYPESENSE_URL,
    typesenseApiKey: values.TYPESENSE_API_KEY,
    typesense: {
      nearestUrl: values.TYPESENSE_NEAREST_URL,
      timeoutSeconds: values.TYPESENSE_TIMEOUT_SECONDS,
      retries: values.TYPESENSE_RETRIES,
      retryIntervalSeconds: values.TYPESENSE_RETRY_INTERVAL_SECONDS,
      healthcheckIntervalSeconds: values.TYPESENSE_HEALTHCHECK_INTERVAL_SECONDS,
    },
    searchDelivery: searchDeliveryConfig(values),
    logLevel: values.LOG_LEVEL,
    publicBaseUrl: values.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    metricsToken: values.METRICS_TOKEN,
    rateLimitPerMinute: values.RATE_LIMIT_PER_MINUTE,
    searchEventsPerMinute: values.SEARCH_EVENTS_PER_MINUTE,
    refusedBodyHoldMs: values.REFUSED_BODY_HOLD_MS,
    searchAnalyticsRetentionDays: values.SEARCH_ANALYTICS_RETENTION_DAYS,
    searchEventsRetentionDays: Math.min(values.SEARCH_EVENTS_RETENTION_DAYS, values.SEARCH_ANALYTICS_RETENTION_DAYS),
    reservationRetentionDays: values.RESERVATION_RETENTION_DAYS,
    checkoutTtlMinutes: values.CHECKOUT_TTL_MINUTES,
    searchSuggestionsRefreshSeconds: values.SEARCH_SUGGESTIONS_REFRESH_SECONDS,
    searchSuggestionsPerMinute: values.SEARCH_SUGGESTIONS_PER_MINUTE,
    oauth: {
      refreshGraceSeconds: values.OAUTH_REFRESH_GRACE_SECONDS,
      jwksMaxAgeSeconds: values.OAUTH_JWKS_MAX_AGE_SECONDS,
      allowPrivateClientMetadata:
        values.OAUTH_ALLOW_PRIVATE_CLIENT_METADATA === 'true' || values.OAUTH_ALLOW_PRIVATE_CLIENT_METADATA === '1',
      clientMetadataCaFile: values.OAUTH_CLIENT_METADATA_CA_FILE,
    },
    oauthRegistrationsPerMinute: values.OAUTH_REGISTRATIONS_PER_MINUTE,
    edge: {
      domain: values.EDGE_DOMAIN,
      originTimeoutMs: values.EDGE_ORIGIN_TIMEOUT_MS,
      cacheMaxBytes: values.EDGE_CACHE_MAX_BYTES,
      staleIfErrorSeconds: values.EDGE_STALE_IF_ERROR_SECONDS,
      maxResponseBytes: values.EDGE_MAX_RESPONSE_BYTES,
      maxRequestBytes: values.EDGE_MAX_REQUEST_BYTES,
      allowPrivateOrigins: values.EDGE_ALLOW_PRIVATE_ORIGINS === 'true' || values.EDGE_ALLOW_PRIVATE_ORIGINS === '1',
    },
    signInThrottle: signInThrottleConfig(values),
    broadcasts: {
      timeoutMs: values.BROADCAST_TIMEOUT_MS,
      maxAttempts: values.BROADCAST_MAX_ATTEMPTS,
      backoffMs: values.BROADCAST_BACKOFF_MS,
      retentionDays: values.BROADCAST_DELIVERY_RETENTION_DAYS,
      allowPrivateWebhooks:
        values.BROADCAST_ALLOW_PRIVATE_WEBHOOKS === 'true' || values.BROADCAST_ALLOW_PRIVATE_WEBHOOKS === '1',
    },
    tracing: tracingConfig(values),
  };
}

/**
 * Tracing is on once an exporter is configured: OTEL_TRACES_EXPORTER names one, or (unset) an OTLP
 * endpoint is given. The traces endpoint is used as given, the general one with `/v1/traces` added.
 */
function tracingConfig(values: z.output<typeof configSchema>): TracingConfig {
  const endpoint = values.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? values.OTEL_EXPORTER_OTLP_ENDPOINT;
  const named = values.OTEL_TRACES_EXPORTER?.filter((name) => name !== 'none');
  const exporters = values.OTEL_SDK_DISABLED ? [] : (named ?? (endpoint === undefined ? [] : ['otlp' as const]));
  return {
    exporters: [...new Set(exporters)],
    otlpUrl:
      values.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
      `${(values.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`,
    otlpProtocol: values.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? values.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    serviceName: values.OTEL_SERVICE_NAME,
    sampler: values.OTEL_TRACES_SAMPLER,
    samplerRatio: values.OTEL_TRACES_SAMPLER_ARG,
  };
}

function signInThrottleConfig(values: z.output<typeof configSchema>): SignInThrottleConfig {
  if (values.SIGN_IN_MAX_LOCK_SECONDS < values.SIGN_IN_LOCK_SECONDS) {
    throw new ConfigError(
      'Invalid configuration: SIGN_IN_MAX_LOCK_SECONDS must be at least SIGN_IN_LOCK_SECONDS ' +
        `(${values.SIGN_IN_LOCK_SECONDS})`,
    );
  }
  return {
    accountFailures: values.SIGN_IN_ACCOUNT_FAILURES,
    addressFailures: values.SIGN_IN_ADDRESS_FAILURES,
    windowSeconds: values.SIGN_IN_WINDOW_SECONDS,
    lockSeconds: values.SIGN_IN_LOCK_SECONDS,
    maxLockSeconds: values.SIGN_IN_MAX_LOCK_SECONDS,
  };
}
