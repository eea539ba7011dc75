import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { outlastClientKeepAlive, SERVER_KEEP_ALIVE_MS } from './http.keep-alive.js';

describe(outlastClientKeepAlive.name, () => {
  let server: Server;
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('keeps an idle connection open past Node’s 5 s default and says so in Keep-Alive', async () => {
    server = createServer((_req, res) => res.end('ok'));
    outlastClientKeepAlive(server);
    expect(server.keepAliveTimeout).toBe(SERVER_KEEP_ALIVE_MS);
    expect(server.headersTimeout).toBeGreaterThan(server.keepAliveTimeout);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const keepAlive = await new Promise<string | undefined>((resolve, reject) => {
      const req = request({ port, host: '127.0.0.1', headers: { connection: 'keep-alive' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers['keep-alive'] as string | undefined));
      });
      req.on('error', reject);
      req.end();
    });
    expect(keepAlive).toBe(`timeout=${SERVER_KEEP_ALIVE_MS / 1000}`);
  });
});
