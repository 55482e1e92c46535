import tseslint from 'typescript-eslint';
import { fileURLToPath } from 'node:url';
import { makeRule } from './scripts/eslint-rooms.js';

const root = fileURLToPath(new URL('.', import.meta.url));

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'build/**',
      'build.tmp-*/**',
      'station-ui/dist/**',
      'test-output/**',
      '**/*.d.ts',
    ],
  },
  {
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    languageOptions: { parser: tseslint.parser, ecmaVersion: 2022, sourceType: 'module' },
    plugins: { tandem: { rules: { rooms: makeRule(root) } }, '@typescript-eslint': tseslint.plugin },
    rules: {
      'tandem/rooms': 'error',
      'no-debugger': 'error',
      'no-var': 'error',
      'prefer-const': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
);
