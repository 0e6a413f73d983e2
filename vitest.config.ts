import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql ships CommonJS (main) and ESM (module) builds. Node, and so graphql-yoga and envelop,
    // load the CommonJS one; Vite would hand our own `import 'graphql'` the ESM one, and two copies
    // of graphql reject each other's types ("Cannot use GraphQLNonNull from another module or realm").
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  // The TypeScript client's sources rather than its build (clients/typescript exports both), as in
  // tsconfig.json; the others are vitest's own default (Vite's server conditions without `module`).
  ssr: { resolve: { conditions: ['commerce-platform-source', 'node', 'development|production'] } },
  test: {
    globalSetup: ['test/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two test files at a time, whatever the machine: vitest's default on 2 cores is one (cores - 1),
    // but a test file mostly waits for PostgreSQL and the processes it starts, so two run in about
    // two thirds of the time of one after the other. Each file has a database of its own.
    maxWorkers: 2,
    minWorkers: 1,
  },
});
