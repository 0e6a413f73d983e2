// @ts-check
import js from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'src/__generated__/',
      'clients/typescript/src/__generated__/',
      'clients/typescript/dist/',
      '.data/',
      'console/dist/',
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
    // A module has a face: another module, and the composition root (src/app.ts, src/modules/index.ts,
    // src/modules/context.ts), use only what its index.ts exports; every other file of it is private.
    // Imports and re-exports are resolved to files, so a path of any depth counts. Tests may reach in.
    files: ['src/**/*.ts'],
    plugins: { boundaries },
    settings: {
      'boundaries/elements': [
        { type: 'kernel', pattern: 'src/kernel' },
        { type: 'generated', pattern: 'src/__generated__' },
        { type: 'module', pattern: 'src/modules/*', capture: ['module'] },
        { type: 'composition', pattern: 'src' },
      ],
      'boundaries/dependency-nodes': ['import', 'export', 'dynamic-import'],
      'boundaries/legacy-templates': false,
      'import/resolver': { node: { extensions: ['.ts'] } },
    },
    rules: {
      'boundaries/dependencies': [
        'error',
        {
          default: 'allow',
          policies: [
            {
              disallow: { to: { element: { type: 'module', fileInternalPath: '!index.ts' } } },
              message:
                'A module is used through its index.ts only: export what you need from ' +
                'src/modules/{{ to.element.captured.module }}/index.ts and import it from there ' +
                '(vocabulary every module shares, such as scopes and principals, lives in src/kernel/).',
            },
            {
              from: { element: { type: 'kernel' } },
              disallow: { to: { element: { type: ['module', 'composition'] } } },
              message:
                'The kernel knows no module: move what both need into src/kernel/, or pass it in from the module.',
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
    // The operators' console: a React app run by the browser (see docs/guides/console.md).
    files: ['console/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    languageOptions: {
      parserOptions: { ecmaFeatures: { jsx: true } },
      globals: Object.fromEntries(
        [
          'addEventListener',
          'atob',
          'btoa',
          'clearTimeout',
          'crypto',
          'document',
          'fetch',
          'history',
          'localStorage',
          'location',
          'removeEventListener',
          'sessionStorage',
          'setTimeout',
          'TextEncoder',
          'URLSearchParams',
        ].map((name) => [name, 'readonly']),
      ),
    },
    rules: reactHooks.configs.recommended.rules,
  },
  {
    // Tests and benchmarks read responses of any shape; src/ is held to the stricter rules.
    files: ['test/**', 'bench/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'max-len': 'off' },
  },
);
