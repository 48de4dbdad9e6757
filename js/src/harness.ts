import type { Client } from './client.js'
import type { Sandbox } from './sandbox.js'
import { connect, type ServerOptions } from './server.js'

/** Hooks of a test runner: node:test's and Vitest's have the same shape. */
export interface Hooks {
  before(fn: () => Promise<void>): void
  after(fn: () => Promise<void>): void
  beforeEach(fn: () => Promise<void>): void
  afterEach(fn: () => Promise<void>): void
}

/** What a suite's tests read: valid inside a test, after the hooks ran. */
export interface Apistend {
  /** The management client of the suite's server. */
  readonly client: Client
  /** This test's sandbox, with a key; deleted after the test. */
  readonly sandbox: Sandbox
}

/** Registers a server for the suite and a sandbox per test on `hooks`. */
export function register(hooks: Hooks, options: ServerOptions = {}): Apistend {
  let client: Client | undefined
  let sandbox: Sandbox | undefined
  let stop: (() => Promise<void>) | undefined
  let counter = 0
  hooks.before(async () => {
    ;({ client, stop } = await connect(options))
  })
  hooks.after(async () => {
    await stop?.()
  })
  hooks.beforeEach(async () => {
    counter += 1
    sandbox = await client!.createSandbox(`test ${counter}`)
  })
  hooks.afterEach(async () => {
    const done = sandbox
    sandbox = undefined
    await done?.delete().catch((e: { status?: number }) => {
      if (e.status !== 404) throw e
    })
  })
  return {
    get client() {
      if (!client) throw new Error('the apistend server is set up by the suite\'s before hook: use it inside a test')
      return client
    },
    get sandbox() {
      if (!sandbox) throw new Error('the sandbox is made by the beforeEach hook: use it inside a test')
      return sandbox
    },
  }
}
