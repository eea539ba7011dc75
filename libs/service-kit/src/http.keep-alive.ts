import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How long an idle keep-alive connection stays open on our HTTP servers. Longer than clients
 * keep theirs (fetch/undici about 4 s, SDKs and proxies up to 60 s), so the client always
 * closes first: with Node's default of 5 s a client that reuses a pooled socket just as the
 * server closes it gets ECONNRESET on a request that never arrived.
 */
export const SERVER_KEEP_ALIVE_MS = 65_000;

export function outlastClientKeepAlive(server: Server): void {
  server.keepAliveTimeout = SERVER_KEEP_ALIVE_MS;
  // Must exceed keepAliveTimeout, or a slow request's headers on a reused socket time out first.
  server.headersTimeout = SERVER_KEEP_ALIVE_MS + 1000;
}

/** Listens on `host:port` (port 0: a free one), idle connections outlasting the clients'; resolves to the port it got. */
export async function listenHttp(server: Server, port: number, host: string): Promise<number> {
  outlastClientKeepAlive(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** Stops taking connections; resolves once the open ones have ended. Nothing to do without a server. */
export async function closeHttp(server: Server | undefined): Promise<void> {
  if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * One node:http server around a request handler, for the small HTTP surfaces a service keeps
 * beside its API (ops endpoints, the indexer): listens with {@link listenHttp}; closing twice,
 * or before it listens, is harmless.
 */
export class HttpEndpoint {
  private server?: Server;

  constructor(private readonly handler: RequestListener) {}

  /** Resolves to the port it got (port 0: a free one). */
  async listen(port: number, host: string): Promise<number> {
    const server = createServer(this.handler);
    this.server = server;
    return listenHttp(server, port, host);
  }

  async close(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    await closeHttp(s);
  }
}
