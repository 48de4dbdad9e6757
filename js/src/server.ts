import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { accessSync, constants, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { Client } from './client.js'
import { ApistendError } from './errors.js'

/** The `apistend` binary: `APISTEND_BIN`, else the first on `PATH`. */
export function findBinary(): string {
  const explicit = process.env.APISTEND_BIN
  if (explicit) {
    try {
      accessSync(explicit, constants.X_OK)
    } catch {
      throw new ApistendError(`APISTEND_BIN=${explicit} is not an executable file`)
    }
    return explicit
  }
  const name = process.platform === 'win32' ? 'apistend.exe' : 'apistend'
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    try {
      accessSync(join(dir, name), constants.X_OK)
      return join(dir, name)
    } catch {
      // not here
    }
  }
  throw new ApistendError(
    'no apistend binary: APISTEND_BIN is unset and none is on PATH (pip install apistend, or cargo install --path crates/cli --locked)',
  )
}

/** How a {@link Server} starts. */
export interface ServerOptions {
  /** Arguments added to `apistend serve` (`['--only', 'apify']`). */
  args?: string[]
  /** The binary; {@link findBinary} by default. */
  binary?: string
  /** Milliseconds to wait for the first answer (30 000). */
  startTimeoutMs?: number
}

const LISTENING = /APIStend sandbox listening on (\S+)/

/**
 * `apistend serve` as a child process, on a free loopback port with a data directory of its
 * own (removed by {@link Server.stop}).
 *
 * ```ts
 * const server = await Server.start({ args: ['--only', 'apify'] })
 * const sandbox = await server.client.createSandbox('demo')
 * await server.stop()
 * ```
 */
export class Server {
  readonly url: string
  readonly client: Client
  readonly dataDir: string
  readonly logPath: string
  #child: ChildProcess

  private constructor(url: string, client: Client, dataDir: string, logPath: string, child: ChildProcess) {
    this.url = url
    this.client = client
    this.dataDir = dataDir
    this.logPath = logPath
    this.#child = child
  }

  /** Starts a server and waits for its first answer; rejects with its output when it does not start. */
  static async start(options: ServerOptions = {}): Promise<Server> {
    const binary = options.binary ?? findBinary()
    const dataDir = mkdtempSync(join(tmpdir(), 'apistend-'))
    const token = 'test-' + randomBytes(16).toString('hex')
    const logPath = join(dataDir, 'apistend.log')
    // The output goes to a file, not a pipe: a chatty server never blocks on it.
    const log = openSync(logPath, 'w')
    const child = spawn(
      binary,
      ['serve', '--addr', '127.0.0.1:0', '--data', dataDir, '--admin-token', token, ...(options.args ?? [])],
      { stdio: ['ignore', log, log], env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? 'warn' } },
    )
    closeSync(log)
    let exited: number | null = null
    child.on('exit', (code) => {
      exited = code ?? -1
    })
    const output = () => {
      try {
        return readFileSync(logPath, 'utf8')
      } catch {
        return ''
      }
    }
    const deadline = Date.now() + (options.startTimeoutMs ?? 30_000)
    const fail = (why: string) => {
      child.kill('SIGKILL')
      rmSync(dataDir, { recursive: true, force: true })
      return new ApistendError(`${why}:\n${output()}`)
    }
    let url: string | undefined
    while (url === undefined) {
      url = LISTENING.exec(output())?.[1]
      if (url !== undefined) break
      if (exited !== null) throw fail(`apistend serve exited (${exited})`)
      if (Date.now() > deadline) throw fail('apistend serve did not start in time')
      await new Promise((r) => setTimeout(r, 10))
    }
    const client = new Client(url, token, { caFile: join(dataDir, 'apistend-ca.pem') })
    while (!(await client.healthy())) {
      if (Date.now() > deadline) throw fail(`${url}/healthz did not answer`)
      await new Promise((r) => setTimeout(r, 10))
    }
    return new Server(url, client, dataDir, logPath, child)
  }

  /** Stops the server (SIGTERM, SIGKILL after 5 s) and removes its data directory. */
  async stop(): Promise<void> {
    const child = this.#child
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await gone
      clearTimeout(timer)
    }
    rmSync(this.dataDir, { recursive: true, force: true })
  }
}

/**
 * The server a test run uses: the one at `APISTEND_URL` (with `APISTEND_ADMIN_TOKEN`, and
 * `APISTEND_CA` for fixed-host clients), or a new one from {@link Server.start}. `stop` stops
 * only what it started.
 */
export async function connect(options: ServerOptions = {}): Promise<{ client: Client; stop: () => Promise<void> }> {
  const url = process.env.APISTEND_URL
  if (url) {
    const token = process.env.APISTEND_ADMIN_TOKEN
    if (!token) throw new ApistendError('APISTEND_URL is set without APISTEND_ADMIN_TOKEN')
    const client = new Client(url, token, { caFile: process.env.APISTEND_CA })
    if (!(await client.healthy())) throw new ApistendError(`APISTEND_URL=${url} does not answer /healthz`)
    return { client, stop: async () => {} }
  }
  const server = await Server.start(options)
  return { client: server.client, stop: () => server.stop() }
}
