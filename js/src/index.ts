/**
 * APIStend for JavaScript and TypeScript test suites: a client of the sandbox's management
 * API and a process handle for `apistend serve`. Test-runner helpers: `apistend/node-test`,
 * `apistend/vitest`.
 */
export { Client, type Query } from './client.js'
export { ApistendError } from './errors.js'
export { Sandbox } from './sandbox.js'
export { Server, connect, findBinary, type ServerOptions } from './server.js'
export type * from './types.js'
