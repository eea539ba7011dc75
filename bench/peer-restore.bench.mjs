// A session that moves between nodes (Symphony on the node): turn 1 runs on node A; turn 2 —
// the whole history plus a new user turn — is sent to another node, three ways in one run:
//   peer      node B, told (kv_sources) that A holds the prefix: it fetches it over gRPC layer by
//             layer while computing (Mnemo);
//   recompute node C, no sources: it prefills the whole history (the baseline at its best: same
//             engine, an empty batch, nothing else running);
//   stayed    node A itself, restoring from its own device/host tiers (the ideal placement).
// Every node is a separate node-manager process with the reference engine on the CPU; requests
// are dispatched straight to the chosen node (as the scheduler would) and TTFT is measured at the
// client, request sent → first token. Writes bench/results/peer-restore.json (figure: bench/figures/peer-restore.figure.mjs).
// Run: npm run bench -- peer-restore [--quick]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { chunkKeys } from '@mnemo/kv-core';
import { decodeMessage, HeartbeatSchema, Subjects } from '@mnemo/proto';
import { counter, freePort, mean, percentile, round, scrapeMetrics, startNats } from '@mnemo/testkit';
import { launch, ready, stop } from './lib/services.mjs';
import { inferOnNode } from './lib/node-infer.mjs';
import { quick, root } from './lib/bench.args.mjs';

const MODEL = process.env.BENCH_MODEL ?? 'mnemo-medium';
const SESSIONS = quick ? 3 : 8;
const HISTORY = quick ? 800 : 1300; // tokens of turn 1 (five chunks at 1300)
const TENANT = 'bench';

const text = (n, salt) => Array.from({ length: n }, (_, i) => (i * 37 + salt * 101 + 7) % 250);

const launchNode = (env) => launch('node-manager', env);
const metric = async (port, name) => counter(await scrapeMetrics(port), name);

async function infer(nc, nodeId, tokens, kvSources = []) {
  const {
    ttftMs,
    cachedTokens,
    tokens: generated,
  } = await inferOnNode(nc, nodeId, { model: MODEL, tenant: TENANT, tokens, maxTokens: 4, kvSources, idPrefix: 'pr' });
  return { ttftMs, cached: cachedTokens, tokens: generated };
}

async function main() {
  const nats = await startNats();
  const dataDir = mkdtempSync(join(tmpdir(), 'mnemo-peer-bench-'));
  const nodes = [];
  try {
    for (const id of ['a', 'b', 'c']) {
      const port = await freePort();
      nodes.push({
        id: `peer-bench-${id}`,
        port,
        child: launchNode({
          NATS_URL: nats.url,
          LOG_LEVEL: 'error',
          METRICS_PORT: String(port),
          NODE_ID: `peer-bench-${id}`,
          NODE_ENGINE: 'reference',
          NODE_MODELS: MODEL,
          NODE_KV_BLOCKS: '512',
          NODE_DATA_DIR: join(dataDir, id),
          NODE_KV_HOST_POOL: '256MiB',
          NODE_KV_SSD_POOLS: `${join(dataDir, id, 'ssd-0.pool')}=512MiB`,
          NODE_KV_BANDWIDTHS: '10,2',
        }),
      });
    }
    await Promise.all(nodes.map((n) => ready(n.port, 180_000)));
    const nc = await connect({ servers: nats.url });
    // The gRPC address each node advertises comes with its heartbeat.
    const addresses = new Map();
    const sub = nc.subscribe(Subjects.HEARTBEAT);
    for await (const m of sub) {
      const hb = decodeMessage(HeartbeatSchema, m.data);
      addresses.set(hb.nodeId, hb.grpcAddress);
      if (nodes.every((n) => addresses.has(n.id))) break;
    }
    const [a, b, c] = nodes;
    // Warm every node's code paths once.
    for (const n of nodes) await infer(nc, n.id, text(300, 999));
    const rows = { peer: [], recompute: [], stayed: [] };
    const mismatches = [];
    for (let s = 0; s < SESSIONS; s++) {
      const turn1 = text(HISTORY, s);
      const first = await infer(nc, a.id, turn1);
      const turn2 = [...turn1, ...first.tokens, ...text(40, 500 + s)];
      const sources = [{ nodeId: a.id, grpcAddress: addresses.get(a.id), chunkKeys: chunkKeys(MODEL, TENANT, turn1) }];
      const peer = await infer(nc, b.id, turn2, sources);
      const recompute = await infer(nc, c.id, turn2);
      const stayed = await infer(nc, a.id, turn2);
      rows.peer.push(peer.ttftMs);
      rows.recompute.push(recompute.ttftMs);
      rows.stayed.push(stayed.ttftMs);
      if (peer.tokens.join() !== recompute.tokens.join() || stayed.tokens.join() !== recompute.tokens.join()) mismatches.push(s);
      console.log(
        `session ${s}: peer ${round(peer.ttftMs, 1)} ms (cached ${peer.cached}), recompute ${round(recompute.ttftMs, 1)} ms, stayed ${round(stayed.ttftMs, 1)} ms`,
      );
    }
    const stat = (xs) => ({ p50: round(percentile(xs, 50), 1), p99: round(percentile(xs, 99), 1), mean: round(mean(xs), 1) });
    const peerBytes = await metric(b.port, 'mnemo_kv_peer_fetch_bytes_total');
    const result = {
      model: MODEL,
      sessions: SESSIONS,
      history_tokens: HISTORY,
      quick,
      ttft_ms: { peer: stat(rows.peer), recompute: stat(rows.recompute), stayed: stat(rows.stayed) },
      peer_vs_recompute_ttft_p50: round(percentile(rows.recompute, 50) / percentile(rows.peer, 50), 2),
      peer_vs_stayed_ttft_p50: round(percentile(rows.peer, 50) / percentile(rows.stayed, 50), 2),
      peer_fetch_bytes: peerBytes,
      peer_restored_tokens: await metric(b.port, 'mnemo_kv_peer_restored_tokens_total'),
      peer_restore_failures: await metric(b.port, 'mnemo_kv_peer_restore_failures_total'),
      peer_blocked_ms_mean: round((1000 * (await metric(b.port, 'mnemo_kv_peer_blocked_seconds_total'))) / SESSIONS, 1),
      token_mismatches: mismatches.length,
      machine_note: 'two shared CPU cores; all three nodes and NATS on one machine',
    };
    console.log(JSON.stringify(result, null, 2));
    writeFileSync(join(root, 'bench/results/peer-restore.json'), JSON.stringify(result, null, 2) + '\n');
    await nc.close();
  } finally {
    await Promise.all(nodes.map((n) => stop(n.child)));
    await nats.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
