import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpEndpoint } from './http.keep-alive.js';
import type { ServiceMetrics } from './metrics.registry.js';

/** A part of a service that works in a reduced way (a journal that cannot write, a database away): named in /healthz. */
export interface DegradedCheck {
  readonly check: string;
  readonly message: string;
}

/**
 * `/metrics`, `/healthz` and `/readyz` for services that have no HTTP API of their
 * own (scheduler, node-manager, profiler). Liveness is "the process answers" (200 even when
 * degraded: restarting would not fix a full disk or a database that is away, so the body says
 * `degraded` and why); readiness is whatever the service says (NATS connected, registered,
 * migrated…).
 */
export class OpsServer {
  private readonly http = new HttpEndpoint((req, res) => this.serve(req, res));

  constructor(
    private readonly metrics: ServiceMetrics,
    private readonly ready: () => boolean,
    private readonly degraded: () => readonly DegradedCheck[] = () => [],
  ) {}

  listen(port: number, host = '127.0.0.1'): Promise<number> {
    return this.http.listen(port, host);
  }

  close(): Promise<void> {
    return this.http.close();
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'method not allowed' }));
    } else if (path === '/metrics') {
      this.metrics.registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': this.metrics.registry.contentType }).end(body),
        () => res.writeHead(500).end(),
      );
    } else if (path === '/healthz') {
      const checks = this.degraded();
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(checks.length > 0 ? { status: 'degraded', checks } : { status: 'ok' }));
    } else if (path === '/readyz') {
      const ok = this.ready();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: ok ? 'ready' : 'not_ready' }));
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    }
  }
}

/**
 * Starts the ops endpoints as a service's last boot step; when the port cannot be bound,
 * `cleanUp` releases what the boot already holds before the error propagates.
 */
export async function listenOrCleanUp(
  ops: Pick<OpsServer, 'listen'>,
  port: number,
  host: string,
  cleanUp: () => Promise<void>,
): Promise<number> {
  try {
    return await ops.listen(port, host);
  } catch (e) {
    await cleanUp();
    throw e;
  }
}
