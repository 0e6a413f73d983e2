import { z } from 'zod';

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const postgresUrl = z
  .string()
  .refine((value) => /^postgres(ql)?:\/\//.test(value), 'must be a postgres:// or postgresql:// URL');

const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: postgresUrl.optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  MASTER_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  TYPESENSE_URL: z.url().optional(),
  TYPESENSE_API_KEY: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(logLevels).default('info'),
  PUBLIC_BASE_URL: z.url().optional(),
});

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  masterKey: string | undefined;
  typesenseUrl: string | undefined;
  typesenseApiKey: string | undefined;
  logLevel: (typeof logLevels)[number];
  publicBaseUrl: string | undefined;
}

export class ConfigError extends Error {}

/** Parses the service configuration from environment variables; the only reader of `process.env`. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(
    Object.keys(configSchema.shape)
      .filter((name) => env[name] !== undefined && env[name] !== '')
      .map((name) => [name, env[name]]),
  );
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  const values = parsed.data;
  return {
    port: values.PORT,
    host: values.HOST,
    databaseUrl: values.DATABASE_URL,
    dataDir: values.DATA_DIR,
    masterKey: values.MASTER_KEY,
    typesenseUrl: values.TYPESENSE_URL,
    typesenseApiKey: values.TYPESENSE_API_KEY,
    logLevel: values.LOG_LEVEL,
    publicBaseUrl: values.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
  };
}
