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
export function startNats(opts?: {
  dir?: string;
  log?: (line: string) => void;
  user?: string;
  password?: string;
  /** A nats-server authorization block (natsUsers().conf) instead of one user. */
  authorization?: string;
  /** Server certificate and key (PEM files): clients must speak TLS. */
  tls?: { cert: string; key: string };
}): Promise<RunningNats>;

export type NatsRole = 'scheduler' | 'gateway' | 'profiler' | 'node';
/** The inbox prefix of a role (`_INBOX_<role>`, `_INBOX_node.<id>`), as services use it. */
export function inboxPrefix(role: NatsRole, nodeId?: string): string;
/** Subjects a role may publish and subscribe (least privilege). */
export function rolePermissions(role: NatsRole, nodeId?: string): { publish: string[]; subscribe: string[] };
/** A node's NATS user name. */
export function nodeUser(nodeId: string): string;
/** Users with random passwords (keys scheduler, gateway, profiler, node:<id>) and the nats-server authorization block. */
export function natsUsers(opts: { nodes: string[]; password?: () => string }): {
  users: Record<string, { user: string; password: string }>;
  conf: string;
};
/** The authorization block with `$ENV` password references (docker-compose, Kubernetes). */
export function natsUsersFromEnv(list: Array<{ role: NatsRole; nodeId?: string; user: string; passwordEnv: string }>): string;

/** True when the `openssl` command runs. */
export function hasOpenssl(): boolean;
/** A private CA (`ca`: its PEM file) and, per name, a certificate and key for the given DNS names / IPs. */
export function makePrivateCa(
  dir: string,
  certs: Record<string, string[]>,
  opts?: { days?: number },
): { ca: string; certs: Record<string, { cert: string; key: string }> };

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

/** Per-run NATS users (one per service and node) and, with openssl, a private CA for NATS and node ↔ node TLS. */
export function makeLocalSecrets(opts: { nodes: string[]; log?: (line: string) => void }): {
  dir: string;
  tls: boolean;
  nats: { authorization: string; tls?: { cert: string; key: string } };
  envFor(role: NatsRole, nodeId?: string): Record<string, string>;
  remove(): void;
};
