/** The shapes the management API answers (`/api/v1/openapi.json` has them all). */

/** A sandbox as the server keeps it. */
export interface SandboxRecord {
  id: string
  name: string
  keys: string[]
  limits: Limit[]
  settings: Record<string, unknown>
  created_at: string
  [field: string]: unknown
}

/** A sandbox's quota of a limit group. */
export interface Limit {
  service: string
  group: string
  burst: number
  interval_ms: number
  algorithm: string
}

/** A service of the catalog. */
export interface ServiceInfo {
  id: string
  /** Its path prefix on the server (`/wb`). */
  prefix: string
  groups: { id: string; burst: number; interval_ms: number; algorithm: string; per_host: boolean }[]
}

/** A bucket and its level. */
export interface Bucket {
  key: string
  service: string
  group: string
  limit: number
  remaining: number
  retry_after_ms: number
  reset_after_ms: number
  locked_for_ms?: number
}

/** Which requests of the journal: every filter left out matches all. */
export interface RequestFilter {
  /** `METHOD /path/template` as the catalog names it, or the template alone. */
  operation?: string
  /** The path as sent; a trailing `*` matches any rest. */
  path?: string
  key?: string
  service?: string
  /** `429` or a class, `4xx`. */
  status?: number | string
  /** `limit`, `validation`, `lockout`, `in_flight`, `operating`, `scenario`, `any`, `none`. */
  refused?: string
  since_ms?: number
  /** A JSONPath (RFC 9535) the request's JSON body has a node at. */
  body_path?: string
  /** The JSON value that node equals. */
  body_value?: string
}

/** One request of the journal, with its answer and the sandbox's decision. */
export interface RequestRecord {
  operation?: string
  service?: string
  group?: string
  key?: string
  request: { method: string; path: string; headers: Record<string, string>; body?: string }
  response: { status: number; headers: Record<string, string>; body?: string }
  refused?: string
  [field: string]: unknown
}

/** How one key treated one limit group. */
export interface GroupConduct {
  service: string
  group?: string
  requests: number
  refused: number
  refused_share: number
  refusals: Record<string, number>
  longest_refusal_run: number
  early_retries: number
  early_by_max_ms?: number
  early_by_median_ms?: number
  retried_dead_ends: Record<string, number>
}

/** How a sandbox's keys treated its services' limits. */
export interface ConductReport {
  verdict: 'clean' | 'violations'
  reasons: string[]
  requests: number
  keys: { key: string; verdict: 'clean' | 'violations'; reasons: string[]; groups: GroupConduct[] }[]
}
