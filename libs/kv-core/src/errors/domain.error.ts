/**
 * Base for every error that carries a machine-readable code. Adapters (HTTP, gRPC, NATS)
 * map `code` to their own status; callers and tests branch on `code`, never on `message`.
 */
export abstract class DomainError<C extends string> extends Error {
  readonly code: C;
  readonly details?: Record<string, unknown>;

  protected constructor(code: C, message: string, details?: Record<string, unknown>) {
    super(message);
    // `new.target.name` keeps subclass names in stack traces without each subclass setting it.
    this.name = new.target.name;
    this.code = code;
    if (details !== undefined) this.details = details;
  }
}

/** Compile-time exhaustiveness guard for switches over unions/enums. */
export function assertUnreachable(x: never): never {
  throw new Error(`unreachable: unexpected value ${JSON.stringify(x)}`);
}
