import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';

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

/**
 * Serves a Nest Express application's JSON API on `host:port`: a JSON body of any content type
 * (curl -d sends form-urlencoded) up to `limit`, no x-powered-by header, idle connections
 * outlasting the clients'. Resolves to the port it got.
 */
export async function listenJsonApi(app: NestExpressApplication, port: number, host: string, limit: number | string): Promise<number> {
  app.getHttpAdapter().getInstance().disable('x-powered-by');
  app.useBodyParser('json', { limit, type: () => true });
  await app.listen(port, host);
  const server = app.getHttpServer() as Server;
  outlastClientKeepAlive(server);
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
