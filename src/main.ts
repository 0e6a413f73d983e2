import { bannerLines } from './banner';
import { ConfigError, loadConfig } from './kernel/config';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './kernel/embedded-postgres';
import { resolveMasterKey } from './kernel/master-key';
import { applyMigrations } from './kernel/migrations';

/** How long shutdown waits for requests in flight before closing the database anyway. */
const SHUTDOWN_GRACE_MS = 30_000;

async function main() {
  const config = loadConfig();
  // Before the database client and the application: they are traced only if tracing is on when made.
  // The SDK is loaded only then: most starts run without it, and loading it costs about 0.1 s of CPU.
  const tracing =
    config.tracing.exporters.length > 0
      ? (await import('./kernel/tracing/setup')).startTracing(config.tracing)
      : undefined;
  const masterKey = resolveMasterKey(config);
  let embedded: EmbeddedDatabase | undefined;
  // The application's code (most of a start) loads while the embedded PostgreSQL, a process of its
  // own, starts beside it.
  const [{ buildApp }, { createDb }, databaseUrl] = await Promise.all([
    import('./app'),
    import('./kernel/db'),
    config.databaseUrl ?? startEmbeddedPostgres(config.dataDir).then((started) => (embedded = started).url),
  ]);
  // Migrations take a session of their own: the direct URL, when the pool goes through a pooler.
  const migrations = await applyMigrations(config.databaseDirectUrl ?? databaseUrl);
  const db = createDb(databaseUrl, { poolSize: config.databasePoolSize });
  // JSON lines for a log collector; readable lines for a person at a terminal.
  const terminal = process.stdout.isTTY === true;
  const { app, services, whenIdle } = await buildApp({ config, db, masterKey: masterKey.key, prettyLogs: terminal });

  for (const warning of migrations.warnings) app.log.warn(warning);
  if (tracing) app.log.info(`tracing: spans go to ${tracing.destination}`);
  // One line however many: a first start applies every migration, and their names say nothing to a reader.
  const applied = migrations.applied.length;
  if (applied > 0) app.log.info(`applied ${applied} migration${applied === 1 ? '' : 's'}`);
  if (embedded) {
    for (const notice of embedded.notices) app.log.warn(notice);
    app.log.info(`embedded PostgreSQL with data in ${config.dataDir}`);
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info(`${signal}: finishing requests in flight and stopping`);
    // close() stops accepting connections at once but resolves only when every connection has
    // ended; keep-alive connections of finished requests would hold it open, so once the requests
    // in flight are done (or the grace period is over) the remaining connections are closed.
    const closed = app.close();
    await whenIdle(SHUTDOWN_GRACE_MS);
    app.server.closeAllConnections();
    await closed;
    await db.$disconnect();
    await embedded?.stop();
    await tracing?.shutdown();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  try {
    await app.listen({ port: config.port, host: config.host });
    const facts = { baseUrl: services.baseUrl, masterKeyFile: masterKey.file, masterKeyGenerated: masterKey.generated };
    // The last lines of a start: every log line of the start is written by now (the logger writes
    // synchronously), so the banner is what a person sees at the bottom of the terminal.
    if (terminal) console.log(`\n${bannerLines(facts).join('\n')}\n`);
    else app.log.info({ ...facts, docs: `${services.baseUrl}/docs` }, 'listening');
  } catch (error) {
    app.log.error(error);
    await db.$disconnect();
    await embedded?.stop();
    process.exit(1);
  }
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
