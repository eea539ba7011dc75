// The chaos benchmark's cluster: a private nats-server with credentials, a scheduler,
// node-managers (the reference engine with the trained default model, or the sim engine) and a
// gateway, each a child process (`apps/<app>/dist/main.js`), never the shared servers. Nodes can
// be SIGKILLed and started again under the same id and data directory (their SSD journal
// replays), SIGSTOPped, and have the SSD extents their journal names for a chunk corrupted; every
// process incarnation's RSS is sampled from /proc.
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { decodeJournal } from '@mnemo/kv-core';
import { join } from 'node:path';
import { freePort, metricValue, scrapeMetrics, startNats } from '@mnemo/testkit';
import { launch, ready, stop } from './services.mjs';

/** Sizes of the chaos cluster: small pools so chunks reach the SSD tier, slow enough decode that streams are cut mid-way. */
export const CHAOS_CLUSTER = {
  nodes: 3,
  model: 'mnemo-tiny',
  env: {
    NODE_MODELS: 'mnemo-tiny',
    // 1 MiB: four mnemo-tiny chunks, so a later turn's restore mostly reads the SSD pool.
    NODE_KV_HOST_POOL: '1MiB',
    NODE_KV_BANDWIDTHS: '10,2',
    NODE_PREFIX_CACHE_BLOCKS: '64',
    NODE_HEARTBEAT_MS: '500',
    NODE_PEER_DEADLINE_BASE_MS: '500',
  },
  /** Per engine: the sim engine models KV and keeps no bytes (no KV store); the reference engine computes real KV. */
  engines: {
    sim: { NODE_ENGINE: 'sim', NODE_KV_BLOCKS: '1024', NODE_SIM_KV_BYTES: '8x16', NODE_SIM_DECODE_STEP_MS: '15' },
    // 160 device blocks (2560 tokens): a few sessions' KV, so older turns leave for the host and SSD pools.
    reference: { NODE_ENGINE: 'reference', NODE_KV_BLOCKS: '160' },
  },
  ssdPool: '32MiB',
  schedulerNodeTimeoutMs: 1500,
  gatewayIdleTimeoutMs: 10_000,
  gatewayRequestTimeoutMs: 60_000,
};

/** VmRSS of a process in bytes, or undefined once it is gone. */
function rssBytes(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Host-pool bytes a node reports in use (excluded from its RSS growth: the KV pool is meant to fill). */
async function hostPoolUsed(port) {
  try {
    return metricValue(await scrapeMetrics(port, 3000), 'mnemo_kv_tier_bytes', { tier: 'host', state: 'used' }) ?? 0;
  } catch {
    return undefined;
  }
}

export class ChaosCluster {
  /** @type {Array<{ service: string, incarnation: number, pid: number, startedMs: number, samples: Array<{ atMs: number, rss: number, pool: number }> }>} */
  incarnations = [];
  nodes = [];

  static async start(dataDir, engine = 'reference') {
    const c = new ChaosCluster();
    await c.#start(dataDir, engine);
    return c;
  }

  async #start(dataDir, engine) {
    if (!CHAOS_CLUSTER.engines[engine]) throw new Error(`unknown engine ${engine}`);
    this.dataDir = dataDir;
    const user = 'chaos';
    const password = randomBytes(18).toString('base64url');
    this.nats = await startNats({ user, password });
    this.common = { NATS_URL: this.nats.url, NATS_USER: user, NATS_PASSWORD: password, LOG_LEVEL: 'error', METRICS_HOST: '127.0.0.1' };
    const peerToken = randomBytes(18).toString('base64url');
    const schedPort = await freePort();
    this.scheduler = {
      port: schedPort,
      child: launch('scheduler', {
        ...this.common,
        METRICS_PORT: String(schedPort),
        SCHEDULER_NODE_TIMEOUT_MS: String(CHAOS_CLUSTER.schedulerNodeTimeoutMs),
      }),
    };
    this.#track('scheduler', this.scheduler.child, () => undefined);
    for (let i = 0; i < CHAOS_CLUSTER.nodes; i++) {
      const id = `chaos-${i}`;
      // A fixed gRPC port: the same address after a restart (the pause fault names it to a puller).
      const node = { id, port: await freePort(), grpcPort: await freePort(), incarnation: 0, env: {} };
      node.env = {
        ...this.common,
        ...CHAOS_CLUSTER.env,
        ...CHAOS_CLUSTER.engines[engine],
        NODE_ID: id,
        METRICS_PORT: String(node.port),
        NODE_GRPC_PORT: String(node.grpcPort),
        NODE_PEER_TOKEN: peerToken,
        NODE_DATA_DIR: join(dataDir, id),
        NODE_KV_SSD_POOLS: `${join(dataDir, id, 'ssd-0.pool')}=${CHAOS_CLUSTER.ssdPool}`,
      };
      this.nodes.push(node);
      this.#launchNode(node);
    }
    const [httpPort, grpcPort, opsPort] = [await freePort(), await freePort(), await freePort()];
    this.gateway = {
      port: opsPort,
      base: `http://127.0.0.1:${httpPort}`,
      child: launch('gateway', {
        ...this.common,
        GATEWAY_PORT: String(httpPort),
        GATEWAY_GRPC_PORT: String(grpcPort),
        METRICS_PORT: String(opsPort),
        MNEMO_DEFAULT_MODEL: CHAOS_CLUSTER.model,
        GATEWAY_IDLE_TIMEOUT_MS: String(CHAOS_CLUSTER.gatewayIdleTimeoutMs),
        GATEWAY_REQUEST_TIMEOUT_MS: String(CHAOS_CLUSTER.gatewayRequestTimeoutMs),
        // The fault ledger asks `why` of every request after a fault: above the per-tenant default.
        GATEWAY_WHY_RATE: '1000',
        GATEWAY_WHY_BURST: '1000',
      }),
    };
    this.#track('gateway', this.gateway.child, () => undefined);
    await Promise.all([ready(schedPort), ready(opsPort), ...this.nodes.map((n) => ready(n.port))]);
    await this.waitForNodes(CHAOS_CLUSTER.nodes);
  }

  #launchNode(node) {
    node.incarnation++;
    node.child = launch('node-manager', node.env);
    this.#track(node.id, node.child, () => hostPoolUsed(node.port));
  }

  #track(service, child, pool) {
    this.incarnations.push({
      service,
      incarnation: this.incarnations.filter((i) => i.service === service).length + 1,
      pid: child.pid,
      startedMs: Date.now(),
      samples: [],
      pool,
    });
  }

  /** One RSS sample of every live incarnation (the KV host pool's used bytes beside each node's). */
  async sample() {
    const now = Date.now();
    await Promise.all(
      this.incarnations.map(async (inc) => {
        const rss = rssBytes(inc.pid);
        if (rss === undefined) return;
        const pool = (await inc.pool()) ?? inc.samples.at(-1)?.pool ?? 0;
        inc.samples.push({ atMs: now, rss, pool });
      }),
    );
  }

  /** Resolves once the scheduler counts `n` live nodes (or throws after `timeoutMs`). */
  async waitForNodes(n, timeoutMs = 60_000) {
    const end = Date.now() + timeoutMs;
    for (;;) {
      try {
        if ((metricValue(await scrapeMetrics(this.scheduler.port), 'mnemo_scheduler_live_nodes') ?? 0) >= n) return;
      } catch {
        // scheduler busy or reconnecting
      }
      if (Date.now() > end) throw new Error(`the scheduler did not see ${n} live nodes in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** SIGKILL (a crash), then the same node again after `downMs`: same id, same data directory. */
  async killAndRestart(node, downMs) {
    const exited = new Promise((r) => node.child.once('exit', r));
    node.child.stopping = true;
    node.child.kill('SIGKILL');
    await exited;
    await new Promise((r) => setTimeout(r, downMs));
    this.#launchNode(node);
    await ready(node.port);
  }

  /** SIGSTOP for `ms`, then SIGCONT: a node that hangs rather than dies. */
  async pause(node, ms) {
    node.child.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, ms));
    node.child.kill('SIGCONT');
  }

  /**
   * The SSD replicas `node`'s journal says it holds now, by `chunkKey` → puts (one per layer): the
   * log replayed as the node replays it (a put, then a remove of the same key and layer, is gone).
   */
  journalReplicas(node) {
    const path = join(this.dataDir, node.id, `journal-${CHAOS_CLUSTER.model}.mkvj`);
    let bytes;
    try {
      bytes = new Uint8Array(readFileSync(path));
    } catch {
      return new Map();
    }
    const live = new Map();
    for (const r of decodeJournal(bytes).records) {
      if (r.kind === 'put') live.set(`${r.chunkKey}/${r.layer}`, r);
      else if (r.kind === 'remove') live.delete(`${r.chunkKey}/${r.layer}`);
    }
    const byKey = new Map();
    for (const p of live.values()) byKey.set(p.chunkKey, [...(byKey.get(p.chunkKey) ?? []), p]);
    return byKey;
  }

  /** Inverts the first 64 bytes of each extent in `node`'s SSD pool file (the stored CRC32C no longer matches). */
  corruptExtents(node, puts) {
    const fd = openSync(join(this.dataDir, node.id, 'ssd-0.pool'), 'r+');
    try {
      for (const p of puts) {
        const b = Buffer.alloc(64);
        readSync(fd, b, 0, b.length, p.offset);
        for (let i = 0; i < b.length; i++) b[i] ^= 0xff;
        writeSync(fd, b, 0, b.length, p.offset);
      }
    } finally {
      closeSync(fd);
    }
  }

  async stop() {
    await stop(this.gateway.child);
    await Promise.all(this.nodes.map((n) => stop(n.child)));
    await stop(this.scheduler.child);
    await this.nats.stop();
  }
}
