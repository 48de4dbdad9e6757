import { enc, type Client, type Query } from './client.js'
import { ApistendError } from './errors.js'
import type { Bucket, ConductReport, Limit, RequestFilter, RequestRecord, SandboxRecord } from './types.js'

/**
 * A sandbox of a server: its keys, limits, settings, buckets, objects, jobs and request journal.
 *
 * ```ts
 * await sandbox.setLimit('apify', 'resource', { burst: 2, intervalMs: 60_000 })
 * await sandbox.countRequests({ status: 429 }) // 0
 * ```
 */
export class Sandbox {
  readonly client: Client
  /** `sbx_…`. */
  readonly id: string
  readonly name: string
  /** The keys when it was read; {@link Sandbox.key} is the first. */
  keys: string[]
  record: SandboxRecord

  constructor(client: Client, record: SandboxRecord) {
    this.client = client
    this.id = record.id
    this.name = record.name
    this.keys = [...record.keys]
    this.record = record
  }

  /** The first key: each service's own credential, or `X-Mock-Key`. */
  get key(): string {
    return this.keys[0]!
  }

  #path(rest = ''): string {
    return `/api/v1/sandboxes/${enc(this.id)}${rest}`
  }

  #prefixes = new Map<string, string>()

  /** Reads the catalog's prefixes for {@link Sandbox.baseUrl}; the client's calls that give a sandbox call it. */
  async ready(): Promise<this> {
    this.#prefixes = new Map((await this.client.services()).map((s) => [s.id, s.prefix]))
    return this
  }

  /** The base URL a client of `service` (`wb`, `apify`…) is given instead of the real one. */
  baseUrl(service: string): string {
    const prefix = this.#prefixes.get(service)
    if (prefix === undefined) {
      const known = [...this.#prefixes.keys()].join(', ')
      throw new ApistendError(`no service '${service}' on this server (there are: ${known})`)
    }
    return this.client.url + prefix
  }

  /**
   * The environment that sends a client whose hosts are fixed to this server: the server as
   * its HTTPS proxy, its authority trusted (`NODE_EXTRA_CA_CERTS` is read by Node at start:
   * give it to a child process).
   */
  proxyEnv(): Record<string, string> {
    const ca = this.client.caFile
    if (!ca) throw new ApistendError("the server's CA file is unknown: set APISTEND_CA to its PEM")
    const url = this.client.url
    return { HTTPS_PROXY: url, https_proxy: url, SSL_CERT_FILE: ca, REQUESTS_CA_BUNDLE: ca, NODE_EXTRA_CA_CERTS: ca }
  }

  /** The sandbox as the server has it now. */
  async refresh(): Promise<SandboxRecord> {
    this.record = await this.client.call<SandboxRecord>('GET', this.#path())
    this.keys = [...this.record.keys]
    return this.record
  }

  /** Deletes the sandbox, its keys, buckets, objects and journal. */
  async delete(): Promise<void> {
    await this.client.call('DELETE', this.#path())
  }

  /** A new key (`key` when given: a suite's fixed credential). */
  async issueKey(key?: string): Promise<string> {
    const issued = await this.client.call<{ key: string }>('POST', this.#path('/keys'), {
      body: key === undefined ? {} : { key },
    })
    this.keys.push(issued.key)
    return issued.key
  }

  /** Revokes `key` at once. */
  async revokeKey(key: string): Promise<void> {
    await this.client.call('DELETE', this.#path(`/keys/${enc(key)}`))
    this.keys = this.keys.filter((k) => k !== key)
  }

  /** This sandbox's quota of a limit group; what is left out keeps its value. */
  async setLimit(
    service: string,
    group: string,
    quota: { burst: number; intervalMs?: number; perSecond?: number; algorithm?: 'gcra' | 'fixed_window' },
  ): Promise<Limit> {
    return this.client.call<Limit>('PUT', this.#path(`/limits/${enc(service)}/${enc(group)}`), {
      body: { burst: quota.burst, interval_ms: quota.intervalMs, per_second: quota.perSecond, algorithm: quota.algorithm },
    })
  }

  /** Removes this sandbox's own quota of a limit group (the plan's or the catalog's applies again). */
  async removeLimit(service: string, group: string): Promise<void> {
    await this.client.call('DELETE', this.#path(`/limits/${enc(service)}/${enc(group)}`))
  }

  /** The sandbox's settings. */
  async settings(): Promise<Record<string, unknown>> {
    return this.client.call('GET', this.#path('/settings'))
  }

  /** Changes the named settings and keeps the others. */
  async updateSettings(changes: Record<string, unknown>): Promise<Record<string, unknown>> {
    const merged = { ...(await this.settings()), ...changes }
    return this.client.call('PUT', this.#path('/settings'), { body: merged })
  }

  /** The buckets' levels (all, or those named). */
  async buckets(filter: { key?: string; service?: string; group?: string } = {}): Promise<Bucket[]> {
    return this.client.call<Bucket[]>('GET', this.#path('/buckets'), { query: { ...filter, all: true, limit: 1000 } })
  }

  /** Refills the buckets (all, or those named) and ends the keys' lockouts. */
  async resetBuckets(filter: { key?: string; service?: string; group?: string } = {}): Promise<void> {
    await this.client.call('POST', this.#path('/buckets/reset'), { query: filter })
  }

  /** The objects the sandbox keeps, by service and collection. */
  async objects(): Promise<Record<string, unknown>> {
    return this.client.call('GET', this.#path('/objects'))
  }

  /** Replaces the named collections with exactly `objects`. */
  async seedObjects(objects: Record<string, unknown>): Promise<unknown> {
    return this.client.call('PUT', this.#path('/objects'), { body: objects })
  }

  /** Every collection starts again with its examples. */
  async resetObjects(): Promise<void> {
    await this.client.call('DELETE', this.#path('/objects'))
  }

  /** Finishes every running job at once. */
  async finishJobs(): Promise<unknown> {
    return this.client.call('POST', this.#path('/jobs/finish'))
  }

  /** The journal's records that match `filter`. */
  async requests(
    filter: RequestFilter = {},
    page: { offset?: number; limit?: number; order?: 'oldest' | 'newest' } = {},
  ): Promise<RequestRecord[]> {
    const answer = await this.client.call<{ requests: RequestRecord[] }>('GET', this.#path('/requests'), {
      query: { ...(filter as Query), ...page },
    })
    return answer.requests
  }

  /** How many requests match `filter`. */
  async countRequests(filter: RequestFilter = {}): Promise<number> {
    const answer = await this.client.call<{ count: number }>('GET', this.#path('/requests/count'), {
      query: filter as Query,
    })
    return answer.count
  }

  /**
   * Waits until `count` requests match `filter` or `timeoutMs` passes; how many match.
   * Rejects with {@link ApistendError} when fewer arrived in time.
   */
  async waitForRequests(count = 1, filter: RequestFilter = {}, timeoutMs = 5000): Promise<number> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const left = Math.max(0, Math.min(deadline - Date.now(), 10_000))
      const waited = await this.client.call<{ reached: boolean; count: number }>(
        'GET',
        this.#path('/requests/wait'),
        { query: { ...(filter as Query), count, timeout_ms: left }, timeoutMs: left + 30_000 },
      )
      if (waited.reached) return waited.count
      if (Date.now() >= deadline) {
        throw new ApistendError(`${waited.count} of ${count} requests matching ${JSON.stringify(filter)} in ${timeoutMs} ms`)
      }
    }
  }

  /** Empties the journal (every instance's). */
  async clearRequests(): Promise<void> {
    await this.client.call('DELETE', this.#path('/requests'))
  }

  /** How each key treated the limits. */
  async conduct(filter: RequestFilter = {}): Promise<ConductReport> {
    return this.client.call<ConductReport>('GET', this.#path('/conduct'), { query: filter as Query })
  }
}
