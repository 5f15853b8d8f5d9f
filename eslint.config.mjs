// ESLint for the TypeScript sources: typescript-eslint's strict, type-checked rules on the project's own tsconfig.
// Formatting is Prettier's job (`npm run format:check`), so eslint-config-prettier turns off the rules it owns.
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'dist-bench/', 'dist-all/', 'coverage/', 'node_modules/', '**/*.js', '**/*.cjs', '**/*.mjs'] },
  eslint.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Nest modules, controllers and DTOs are classes whose body lives in decorators (class-validator, @Module).
      '@typescript-eslint/no-extraneous-class': ['error', { allowWithDecorator: true }],
      // Numbers and booleans in messages and keys read well; objects still may not be interpolated.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `(line) => log(line)` is the project's way to pass a callback; braces around it would add noise, not safety.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // In-memory adapters implement async ports with `async` and no await on purpose: a throw becomes a rejection,
      // as with the real store, so callers see one behaviour.
      '@typescript-eslint/require-await': 'off',
      // `_` marks a deliberately unused parameter (a port's signature, a Nest hook).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Tests and benchmarks read JSON bodies whose shape is what they assert; typing each body would restate the spec.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'src/**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // A missing value fails the test at the `!` as clearly as an explicit check would.
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  prettier,
);
