// Hand-written types for index.mjs (plain ESM with JSDoc, no build step), so TypeScript
// callers such as infra.spec.ts type-check. Keep in step with the JSDoc in the .mjs files.

/** A private server started by this package; `stop()` ends it and removes `dir`. */
export interface RunningServer {
  url: string;
  port: number;
  dir: string;
  stop: () => Promise<void>;
}

/** A connection URL fit for a log line: password masked; an unparsable URL is not echoed. */
export function redactUrl(url: string): string;

/** A TCP port on 127.0.0.1 that was free a moment ago (the kernel picks it). */
export function freePort(): Promise<number>;

/** A private nats-server: with credentials when started with them; `restart(downMs)` kills it and starts it again on the same port. */
export interface RunningNats extends RunningServer {
  user?: string;
  password?: string;
  restart: (downMs?: number) => Promise<void>;
  pid: () => number | undefined;
}

/**
 * Starts a private `nats-server` with JetStream on a free port of 127.0.0.1.
 * `dir`: parent of the private store directory; `user` / `password`: clients must present them.
 */
export function startNats(opts?: { dir?: string; log?: (line: string) => void; user?: string; password?: string }): Promise<RunningNats>;

/**
 * Starts a private Postgres on a free port of 127.0.0.1 with database `database` (default `mnemo`).
 * `dir`: parent of the private data directory.
 */
export function startPostgres(opts?: { dir?: string; database?: string }): Promise<RunningPostgres>;

/** A private Postgres: `down()` shuts it down keeping its data, `up()` starts it again on the same port (an outage). */
export interface RunningPostgres extends RunningServer {
  down: () => Promise<void>;
  up: () => Promise<void>;
}
