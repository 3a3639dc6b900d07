// ESLint (flat config) with the Temporal TypeScript samples' two rules: no Node built-ins in workflow code
// (the workflow sandbox has none, and a stray import fails only when the bundle is built) and no floating
// promises (a forgotten await of an activity or a write loses its failure). Type-aware, over src/, test/, scripts/, bench/.
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

const NODE_BUILTINS = builtinModules.flatMap((name) => [name, `node:${name}`]);

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.ratchet/**', 'examples/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts', 'vitest.config.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname },
    },
    // Directives written for rules this config does not enable (no-explicit-any) are left alone.
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-for-in-array': 'error',
      '@typescript-eslint/no-implied-eval': 'error',
    },
  },
  {
    // search-attributes.ts is imported by the workflow, so it runs in the sandbox too.
    files: ['src/workflows/**/*.ts', 'src/temporal/search-attributes.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: NODE_BUILTINS.map((name) => ({
            name,
            message: 'workflow code runs in the Temporal sandbox: no Node built-ins (do the I/O in an activity)',
          })),
        },
      ],
    },
  },
);
