/** Jest runs the TypeScript sources directly; `npm test` type-checks everything first. */
module.exports = {
  // Removes each file's temporary directories when it ends, and names anything it leaked.
  testEnvironment: '<rootDir>/test/support/test-environment.js',
  // A run that leaves anything in the system temporary directory fails, naming the files.
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  roots: ['<rootDir>/test', '<rootDir>/src'],
  // The import aliases of tsconfig.json "paths".
  moduleNameMapper: {
    '^#shared/(.*)$': '<rootDir>/src/shared/$1',
    '^#infrastructure/(.*)$': '<rootDir>/src/infrastructure/$1',
    '^#modules/(.*)$': '<rootDir>/src/modules/$1',
    '^#trial-runner$': '<rootDir>/src/trial-runner/index.ts',
  },
  testMatch: ['**/*.spec.ts', '**/*.e2e.ts', '**/*.contract-spec.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  // Inside the project, not the system temporary directory, which a test run must leave as it found it.
  cacheDirectory: '<rootDir>/node_modules/.cache/jest',
  testTimeout: 60000,
};
