// Lint rules: the recommended sets, plus the layering rules: api/ and worker/ never import
// each other, and the SDK (a package of its own, without dependencies) imports only its own files
// and Node's built-in modules.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'sdk/dist/', 'node_modules/', 'coverage/', '.cos/', 'jest.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['api/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/worker/**'], message: 'api/ must not depend on worker/' }] }] },
  },
  {
    files: ['worker/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/api/**'], message: 'worker/ must not depend on api/' }] }] },
  },
  {
    files: ['shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/api/**', '**/worker/**'], message: 'shared/ must not depend on api/ or worker/' }] },
      ],
    },
  },
  {
    files: ['dashboard/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/api/**', '**/worker/**'], message: 'dashboard/ must not depend on api/ or worker/' }] },
      ],
    },
  },
  {
    // The dashboard's browser scripts (uPlot is the bundled chart library's global).
    files: ['dashboard/assets/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        document: 'readonly',
        navigator: 'readonly',
        window: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        uPlot: 'readonly',
      },
    },
  },
  {
    files: ['sdk/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^(?!\\./|node:)', message: "sdk/ stands alone: Node's built-ins only, no dependencies, no imports from the service" },
          ],
        },
      ],
    },
  },
);
