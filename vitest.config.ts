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
  },
});
