/**
 * For Vitest: a server for the file's tests, a sandbox per test.
 *
 * ```ts
 * import { test } from 'vitest'
 * import { useApistend } from 'apistend/vitest'
 * const apistend = useApistend()
 * test('…', async () => { apistend.sandbox.baseUrl('apify') })
 * ```
 */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { register, type Apistend } from './harness.js'
import type { ServerOptions } from './server.js'

export type { Apistend } from './harness.js'

/** Registers the hooks; the returned object's `client` and `sandbox` are valid inside a test. */
export function useApistend(options: ServerOptions = {}): Apistend {
  return register(
    {
      before: (fn) => beforeAll(fn, 60_000),
      after: (fn) => afterAll(fn, 30_000),
      beforeEach: (fn) => beforeEach(fn),
      afterEach: (fn) => afterEach(fn),
    },
    options,
  )
}
