/**
 * For node's test runner: a server for the file's tests, a sandbox per test.
 *
 * ```ts
 * import { test } from 'node:test'
 * import { useApistend } from 'apistend/node-test'
 * const apistend = useApistend({ args: ['--only', 'apify'] })
 * test('…', async () => { apistend.sandbox.baseUrl('apify') })
 * ```
 */
import { after, afterEach, before, beforeEach } from 'node:test'
import { register, type Apistend } from './harness.js'
import type { ServerOptions } from './server.js'

export type { Apistend } from './harness.js'

/** Registers the hooks; the returned object's `client` and `sandbox` are valid inside a test. */
export function useApistend(options: ServerOptions = {}): Apistend {
  return register({ before, after, beforeEach, afterEach }, options)
}
