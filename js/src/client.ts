import { ApistendError } from './errors.js'
import { Sandbox } from './sandbox.js'
import type { SandboxRecord, ServiceInfo } from './types.js'

/** Query parameters: those `undefined` are left out. */
export type Query = Record<string, string | number | boolean | undefined>

/**
 * A client of one server's management API (`/api/v1`), with the platform's `fetch`.
 *
 * ```ts
 * const client = new Client('http://127.0.0.1:8080', adminToken)
 * const sandbox = await client.createSandbox('checkout tests')
 * sandbox.baseUrl('apify') // 'http://127.0.0.1:8080/apify'
 * ```
 *
 * Every call rejects with {@link ApistendError} when the server answers an error (with its
 * status and problem details) or cannot be reached.
 */
export class Client {
  readonly url: string
  readonly adminToken: string
  /** The server's certificate authority (PEM) for clients with fixed hosts, when known. */
  readonly caFile: string | undefined
  #services: ServiceInfo[] | undefined

  constructor(url: string, adminToken: string, options: { caFile?: string } = {}) {
    this.url = url.replace(/\/+$/, '')
    this.adminToken = adminToken
    this.caFile = options.caFile
  }

  /** A new sandbox with its first key (and `key` as a second, fixed one when given). */
  async createSandbox(name = 'test', options: { key?: string } = {}): Promise<Sandbox> {
    const record = await this.call<SandboxRecord>('POST', '/api/v1/sandboxes', {
      body: { name: name.slice(0, 200) },
    })
    const sandbox = await new Sandbox(this, record).ready()
    if (options.key !== undefined) await sandbox.issueKey(options.key)
    return sandbox
  }

  /** An existing sandbox by its id. */
  async sandbox(id: string): Promise<Sandbox> {
    return new Sandbox(this, await this.call<SandboxRecord>('GET', `/api/v1/sandboxes/${enc(id)}`)).ready()
  }

  /** The catalog's services, their prefixes and limit groups (read once). */
  async services(): Promise<ServiceInfo[]> {
    this.#services ??= await this.call<ServiceInfo[]>('GET', '/api/v1/services')
    return this.#services
  }

  /** Whether `/healthz` answers 200. */
  async healthy(): Promise<boolean> {
    try {
      const answer = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(2000) })
      await answer.body?.cancel()
      return answer.status === 200
    } catch {
      return false
    }
  }

  /** One call: its JSON answer (`undefined` for an empty one). */
  async call<T>(
    method: string,
    path: string,
    options: { query?: Query; body?: unknown; timeoutMs?: number } = {},
  ): Promise<T> {
    let url = this.url + path
    const pairs = Object.entries(options.query ?? {}).filter(
      (pair): pair is [string, string | number | boolean] => pair[1] !== undefined,
    )
    if (pairs.length > 0) {
      url += '?' + new URLSearchParams(pairs.map(([k, v]): [string, string] => [k, String(v)])).toString()
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.adminToken}`,
      accept: 'application/json',
    }
    let body: string | undefined
    if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers['content-type'] = 'application/json'
    }
    let answer: Response
    try {
      answer = await fetch(url, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      })
    } catch (e) {
      throw new ApistendError(`${method} ${url}: no answer: ${String(e)}`)
    }
    const text = await answer.text()
    if (!answer.ok) {
      let problem: Record<string, unknown>
      try {
        problem = JSON.parse(text) as Record<string, unknown>
      } catch {
        problem = { detail: text }
      }
      const detail = String(problem.detail ?? problem.title ?? '')
      throw new ApistendError(`${method} ${path}: ${answer.status} ${detail}`.trimEnd(), answer.status, problem)
    }
    return (text ? JSON.parse(text) : undefined) as T
  }
}

/** A path segment, percent-encoded. */
export function enc(segment: string): string {
  return encodeURIComponent(segment)
}
