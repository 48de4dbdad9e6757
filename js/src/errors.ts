/** A call to the management API answered an error, or the server could not be reached. */
export class ApistendError extends Error {
  /** The HTTP status; `undefined` when no answer came. */
  readonly status: number | undefined
  /** The answer's problem details (RFC 9457: `title`, `detail`…), when it sent them. */
  readonly problem: Record<string, unknown>

  constructor(message: string, status?: number, problem?: Record<string, unknown>) {
    super(message)
    this.name = 'ApistendError'
    this.status = status
    this.problem = problem ?? {}
  }
}
