import { OpsServer } from './ops.server.js';
import { ServiceMetrics } from './metrics.registry.js';

describe(OpsServer.name, () => {
  const get = async (port: number, path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, body: (await res.json()) as unknown };
  };

  it.each([
    ['nothing degraded', [], { status: 'ok' }],
    [
      'a degraded part, named with why (still live: 200)',
      [{ check: 'kv_journal:m', message: 'ENOSPC' }],
      { status: 'degraded', checks: [{ check: 'kv_journal:m', message: 'ENOSPC' }] },
    ],
  ])('/healthz with %s', async (_name, checks, body) => {
    const sut = new OpsServer(
      new ServiceMetrics('test'),
      () => true,
      () => checks,
    );
    const port = await sut.listen(0);
    try {
      expect(await get(port, '/healthz')).toEqual({ status: 200, body });
    } finally {
      await sut.close();
    }
  });

  it('answers /readyz from the service', async () => {
    const sut = new OpsServer(new ServiceMetrics('test'), () => false);
    const port = await sut.listen(0);
    try {
      expect(await get(port, '/readyz')).toEqual({ status: 503, body: { status: 'not_ready' } });
    } finally {
      await sut.close();
    }
  });
});
