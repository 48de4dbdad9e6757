import { defineConfig } from 'vitest/config'

// Vitest runs its own files only; test/node.test.mjs belongs to node's test runner.
export default defineConfig({ test: { include: ['test/**/*.vitest.ts'], testTimeout: 30_000 } })
