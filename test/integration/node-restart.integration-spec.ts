// A local cluster that heals (done-when "a node killed under load"): two node-managers run as
// supervised child processes (the supervisor `npm start` uses); one is SIGKILLed while clients
// keep sending requests through the gateway. No request fails: those started after the kill are
// re-dispatched by the scheduler, those the node held continue elsewhere (gateway failover), and
// the supervisor starts the node again and it re-registers, and a session whose first turn ran
// on the dead node continues on the other (recomputing its prefix). Sim engine; real NATS, scheduler, gateway and processes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SupervisedProcess } from '@mnemo/testkit';
import { Cluster, eventually } from './cluster.js';
import { dispatch } from './direct-dispatch.js';
import { startSupervisedNode } from './supervised-node.js';

const until = (pred: () => boolean | Promise<boolean>, what: string, timeoutMs = 30000) => eventually(pred, what, timeoutMs);

interface Outcome {
  readonly startedAt: number;
  readonly status: number;
  readonly finish?: string;
}

describe('a node-manager killed under load', () => {
  let cluster: Cluster;
  let dataDir: string;
  const nodes = new Map<string, { proc: SupervisedProcess; metricsPort: number }>();

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'mnemo-restart-'));
    cluster = await Cluster.start({ nodes: 0, gateway: true });
    const run = `${process.pid}`;
    for (const name of [`heal-a-${run}`, `heal-b-${run}`]) {
      const { proc, metricsPort } = await startSupervisedNode({
        name,
        dataDir,
        policy: { baseMs: 200, maxMs: 2000, maxRestarts: 3, windowMs: 60_000 },
      });
      nodes.set(name, { proc, metricsPort });
    }
    await cluster.waitForLiveNodes(2, 30_000);
  });
  afterAll(async () => {
    for (const n of nodes.values()) await n.proc.stop(5000);
    await cluster?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const base = () => `http://127.0.0.1:${cluster.gateway!.httpPort}`;
  async function complete(prompt: number[]): Promise<Outcome & { text?: string; tokens?: number }> {
    const startedAt = Date.now();
    try {
      const res = await fetch(`${base()}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mnemo-tiny', prompt, max_tokens: 16, temperature: 0 }),
        signal: AbortSignal.timeout(20_000),
      });
      const body = (await res.json()) as { choices?: Array<{ finish_reason: string; text: string }> };
      return { startedAt, status: res.status, finish: body.choices?.[0]?.finish_reason, text: body.choices?.[0]?.text };
    } catch {
      return { startedAt, status: 0 };
    }
  }

  it('keeps serving; the node comes back and re-registers; a session continues on the other node', async () => {
    const [victim, survivor] = [...nodes.keys()] as [string, string];
    // A session's first turn, before the kill.
    const turn1 = Array.from({ length: 300 }, (_, i) => (i * 7 + 1) % 250);
    expect((await complete(turn1)).status).toBe(200);

    const outcomes: Outcome[] = [];
    let loading = true;
    const clients = Array.from({ length: 4 }, async (_, c) => {
      for (let i = 0; loading; i++)
        outcomes.push(await complete(Array.from({ length: 40 + ((i + c) % 30) }, (_, j) => (j * 3 + c + i) % 250)));
    });
    await new Promise((r) => setTimeout(r, 1500));

    const { proc } = nodes.get(victim)!;
    const oldPid = proc.child!.pid;
    const exited = proc.exited;
    proc.child!.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();

    // The session's next turn, after the kill: served (by the survivor, recomputing).
    const turn2 = await complete([...turn1, 9, 9, 9]);
    expect(turn2.status).toBe(200);
    // Fresh clients too: what started after the kill must be served.
    await Promise.all(
      Array.from({ length: 4 }, async (_, c) => {
        for (let i = 0; i < 3; i++) outcomes.push(await complete(Array.from({ length: 50 + i }, (_, j) => (j * 5 + c) % 250)));
      }),
    );

    // The supervisor restarts it; it re-registers with the scheduler and takes requests again.
    await until(async () => proc.running && proc.child!.pid !== oldPid, 'the restart');
    await cluster.waitForLiveNodes(2, 30_000);
    await new Promise((r) => setTimeout(r, 1500));
    loading = false;
    await Promise.all(clients);

    const after = outcomes.filter((o) => o.startedAt > killedAt);
    expect(after.length).toBeGreaterThan(10);
    expect(after.filter((o) => o.status !== 200 || o.finish === 'error')).toEqual([]);
    // Those the dead node held when it died continued on the other node (gateway failover): none failed.
    expect(outcomes.filter((o) => o.status !== 200 || o.finish === 'error')).toEqual([]);
    expect(proc.restarts).toHaveLength(1);
    // The restarted node admits and serves work again.
    const direct = await dispatch(cluster, victim, [1, 2, 3, 4, 5]);
    expect(direct.error).toBeUndefined();
    expect(direct.tokens.length).toBeGreaterThan(0);
    expect(nodes.get(survivor)!.proc.restarts).toHaveLength(0);
  });
});
