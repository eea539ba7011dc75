// NATS with credentials, as `npm start` and docker-compose run it: a private nats-server that
// refuses clients without its user and password; every service reads them from NATS_USER /
// NATS_PASSWORD (or from the URL) and serves; a client without them is refused, and a service
// without them fails at boot with a clear error instead of running deaf.
import { connect } from '@nats-io/transport-node';
import { startGateway, type GatewayHandle } from '../../apps/gateway/src/app.js';
import { startNodeManager, type NodeManagerHandle } from '../../apps/node-manager/src/bootstrap/app.js';
import { startScheduler, type SchedulerHandle } from '../../apps/scheduler/src/app.js';
import { startNats } from '@mnemo/testkit';
import { scrape, waitFor } from './cluster.js';

const USER = 'mnemo';
const PASSWORD = 'itest-Zq9-secret';

describe('NATS with credentials', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let scheduler: SchedulerHandle;
  let node: NodeManagerHandle;
  let gateway: GatewayHandle;
  const creds = { NATS_USER: USER, NATS_PASSWORD: PASSWORD };

  beforeAll(async () => {
    nats = await startNats({ user: USER, password: PASSWORD });
    scheduler = await startScheduler({
      NATS_URL: nats.url,
      ...creds,
      METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
      SCHEDULER_NODE_TIMEOUT_MS: '1000',
    });
    // The other way to give them: inside the URL, as a Kubernetes Secret builds it.
    const inUrl = nats.url.replace('nats://', `nats://${USER}:${encodeURIComponent(PASSWORD)}@`);
    node = await startNodeManager({
      NATS_URL: inUrl,
      METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
      NODE_ID: `creds-${process.pid}`,
      NODE_ENGINE: 'sim',
      NODE_HEARTBEAT_MS: '100',
      NODE_KV_STORE: 'off',
    });
    gateway = await startGateway({
      NATS_URL: nats.url,
      ...creds,
      GATEWAY_PORT: '0',
      GATEWAY_GRPC_PORT: '0',
      METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
    });
    await waitFor(async () => (await scrape(scheduler.metricsPort, 'mnemo_scheduler_live_nodes')) === 1, 10_000, 'the node registered');
  });
  afterAll(async () => {
    await gateway?.stop();
    await node?.stop();
    await scheduler?.stop();
    await nats?.stop();
  });

  it('refuses a client without the credentials, or with wrong ones', async () => {
    await expect(connect({ servers: nats.url, reconnect: false, timeout: 3000 })).rejects.toThrow(/Authorization/);
    await expect(connect({ servers: nats.url, user: USER, pass: 'guess', reconnect: false, timeout: 3000 })).rejects.toThrow(
      /Authorization/,
    );
  });

  it('refuses to start a service without them, saying why', async () => {
    await expect(startScheduler({ NATS_URL: nats.url, METRICS_PORT: '0', LOG_LEVEL: 'error' })).rejects.toThrow(/Authorization/);
  });

  it('serves an inference through every service with them', async () => {
    const res = await fetch(`http://127.0.0.1:${gateway.httpPort}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mnemo-tiny', prompt: 'Hello', max_tokens: 8, temperature: 0 }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: Array<{ text: string }>; usage: { completion_tokens: number } };
    expect(body.usage.completion_tokens).toBe(8);
  });
});
