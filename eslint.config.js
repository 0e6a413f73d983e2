// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'src/__generated__/',
      'clients/typescript/src/__generated__/',
      'clients/typescript/dist/',
      '.data/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // Unused arguments named with a leading underscore are part of a signature (resolvers, hooks).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      'max-len': ['error', { code: 120, ignoreUrls: true, ignoreRegExpLiterals: true }],
    },
  },
  {
    // A module has a face: another module uses what its index.ts exports, never its storage. Stock is
    // written only through the stock module's verbs, so the invariants its repository keeps stay in one place.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../*/repository/*', '../../*/repository/*', '**/modules/*/repository/*'],
              message: "Another module's repository is private: import what its index.ts exports.",
            },
            {
              group: ['../*/*.repository', '../../*/*.repository', '**/modules/*/*.repository'],
              message: "Another module's repository is private: import what its index.ts exports.",
            },
          ],
        },
      ],
    },
  },
  {
    // Scripts of the service's pages, run by the browser next to the renderers' bundles.
    files: ['src/**/assets/*.js', 'src/kernel/graphql/graphiql/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        self: 'readonly',
        document: 'readonly',
        fetch: 'readonly',
        localStorage: 'readonly',
        location: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        KeyboardEvent: 'readonly',
        Scalar: 'readonly',
        YogaGraphiQL: 'readonly',
      },
    },
  },
  {
    // Tests and benchmarks read responses of any shape; src/ is held to the stricter rules.
    files: ['test/**', 'bench/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'max-len': 'off' },
  },
);
