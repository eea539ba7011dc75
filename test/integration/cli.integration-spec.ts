// The mnemo CLI against a real cluster (gateway, scheduler, two sim nodes): `chat` over piped
// input shows each answer with its time to first token and its cached tokens by source (the
// second turn reuses the first from the device), `why` explains a turn, `status` lists the nodes;
// the installed bin runs as a process.
import { execFile } from 'node:child_process';
import { PassThrough, Writable } from 'node:stream';
import { promisify } from 'node:util';
import { chat, status, why } from '../../apps/cli/src/commands.js';
import { GatewayClient } from '../../apps/cli/src/gateway.client.js';
import { Cluster } from './cluster.js';

const sink = () => {
  let text = '';
  const w = new Writable({ write: (c, _e, cb) => ((text += c.toString()), cb()) });
  return { w, text: () => text };
};

describe('mnemo CLI', () => {
  let cluster: Cluster;
  let gw: GatewayClient;
  beforeAll(async () => {
    cluster = await Cluster.start({ nodes: 2, gateway: true });
    gw = new GatewayClient({ url: `http://127.0.0.1:${cluster.gateway!.httpPort}` });
  });
  afterAll(async () => cluster?.stop());

  it('chat: two turns, each followed by TTFT and cached tokens by source; why and status explain the cluster', async () => {
    const input = new PassThrough();
    const out = sink();
    const long = 'tell me about caches '.repeat(20); // > 256 tokens with the chat template: a whole chunk to reuse
    const done = chat(gw, { model: 'mnemo-tiny', maxTokens: 4, input, output: out.w });
    input.write(`${long}\n`);
    const until = async (pred: () => boolean) => {
      for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 50));
    };
    await until(() => (out.text().match(/\[TTFT/g) ?? []).length >= 1);
    await new Promise((r) => setTimeout(r, 300)); // the node's KV events reach the directory
    input.write('and more\n');
    await until(() => (out.text().match(/\[TTFT/g) ?? []).length >= 2);
    input.end();
    expect(await done).toBe(0);
    const lines = out
      .text()
      .split('\n')
      .filter((l) => l.startsWith('[TTFT'));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\[TTFT \d+ ms · cached 0\/\d+ tokens\]$/);
    // The second prompt repeats the first turn: its whole chunk comes from the device.
    expect(lines[1]).toMatch(/^\[TTFT \d+ ms · cached ([1-9]\d*)\/\d+ tokens: device \1\]$/);

    // why, for the last request the gateway served (its id from the routed records).
    const lastId = await lastRequestId(gw);
    const w = sink();
    await why(gw, lastId, {}, (s) => w.w.write(s));
    expect(w.text()).toMatch(/request [0-9a-f-]+ · mnemo-tiny on /);
    expect(w.text()).toMatch(/0\s+0\+256\s+device\s+device prefix cache hit/);

    const s = sink();
    await status(gw, (x) => s.w.write(x));
    for (const n of cluster.nodes) expect(s.text()).toContain(n.nodeId);
    expect(s.text()).toMatch(/policy symphony · 2 node\(s\)/);
  });

  it('the installed bin runs: mnemo status', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['apps/cli/bin/mnemo.mjs', '--url', gw.url, 'status'], {
      timeout: 20_000,
    });
    expect(stdout).toContain('node');
    const bad = await promisify(execFile)(process.execPath, ['apps/cli/bin/mnemo.mjs', '--url', 'http://127.0.0.1:1', 'status']).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(bad).toMatchObject({ code: 1, stderr: expect.stringContaining('cannot reach the gateway') });
  });
});

/** The id of a fresh request, to ask why about: one more chat turn's id. */
async function lastRequestId(gw: GatewayClient): Promise<string> {
  const r = await gw.chatStream(
    { model: 'mnemo-tiny', messages: [{ role: 'user', content: 'tell me about caches '.repeat(20) }], max_tokens: 1 },
    () => undefined,
  );
  return r.id!;
}
