// The subcommands of `mnemo`. Each takes what it needs and returns an exit code; long work
// (profiling jobs) shows a cli-progress bar.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { fileURLToPath } from 'node:url';
import cliProgress from 'cli-progress';
import { statusText, turnLine, whyText } from './format.js';
import type { GatewayClient } from './gateway.client.js';
import type { ClusterStatus, ModelList, ProfilingJob, RequestKv } from './gateway.types.js';

/** Where a command writes its report. */
export type Out = (s: string) => void;

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Runs a script of the repository with the terminal attached; resolves with its exit code. */
function run(args: string[]): Promise<number> {
  return new Promise((res) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
    const forward = (sig: NodeJS.Signals) => child.kill(sig);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      res(code ?? (signal ? 1 : 0));
    });
  });
}

/** `mnemo up`: `npm start` (installs and builds what is missing, then the local cluster). */
export async function up(): Promise<number> {
  const ensured = await run([join(ROOT, 'scripts/ensure.mjs')]);
  return ensured !== 0 ? ensured : run([join(ROOT, 'scripts/start.mjs')]);
}

/** `mnemo bench NAME [args…]`: `npm run bench -- NAME`. */
export async function bench(name: string, rest: string[]): Promise<number> {
  return run([join(ROOT, 'scripts/bench.mjs'), name, ...rest]);
}

/** `mnemo status`: nodes, load, KV per tier and routed hit rates. */
export async function status(gw: GatewayClient, out: Out): Promise<number> {
  const [cluster, models] = await Promise.all([gw.json<ClusterStatus>('/v1/cluster'), gw.json<ModelList>('/v1/models')]);
  out(statusText(cluster, models) + '\n');
  return 0;
}

/** `mnemo why ID`: where each chunk of a request's prompt came from (`--json`: the raw answer). */
export async function why(gw: GatewayClient, id: string, o: { json?: boolean }, out: Out): Promise<number> {
  const w = await gw.json<RequestKv>(`/v1/requests/${encodeURIComponent(id)}/kv`);
  out((o.json ? JSON.stringify(w, null, 2) : whyText(w)) + '\n');
  return 0;
}

/**
 * `mnemo profile BASE DERIVED`: starts a DroidSpeak profiling job, shows its progress, then
 * saves the pair's heatmap and prints its path.
 */
export async function profile(
  gw: GatewayClient,
  base: string,
  derived: string,
  o: { out?: string; pollMs?: number; progress?: boolean },
  out: Out,
): Promise<number> {
  const job = await gw.json<ProfilingJob>('/v1/profiler/jobs', { method: 'POST', body: JSON.stringify({ base, derived }) });
  out(`profiling ${base} → ${derived}: job ${job.id}\n`);
  const bar =
    o.progress === false
      ? null
      : new cliProgress.SingleBar(
          { format: ' {bar} {percentage}% | {value}/{total} patterns | ETA {eta_formatted}', hideCursor: true },
          cliProgress.Presets.shades_classic,
        );
  bar?.start(job.totalPatterns ?? 1, job.donePatterns ?? 0);
  let j = job;
  try {
    while (j.status !== 'done' && j.status !== 'failed') {
      await new Promise((r) => setTimeout(r, o.pollMs ?? 1000));
      j = await gw.json<ProfilingJob>(`/v1/profiler/jobs/${j.id}`);
      bar?.setTotal(j.totalPatterns);
      bar?.update(j.donePatterns);
    }
  } finally {
    bar?.stop();
  }
  if (j.status === 'failed') {
    out(`job ${j.id} failed: ${j.error}\n`);
    return 1;
  }
  const r = await gw.fetch(`${gw.url}/v1/profiler/pairs/${encodeURIComponent(base)}/${encodeURIComponent(derived)}/heatmap.svg`, {
    headers: gw.headers(),
  });
  if (!r.ok) throw new Error(`the heatmap is not available (HTTP ${r.status})`);
  const path = resolve(o.out ?? `heatmap-${base}-${derived}.svg`);
  await writeFile(path, Buffer.from(await r.arrayBuffer()));
  out(`heatmap: ${path}\n`);
  return 0;
}

/** What `mnemo chat` reads and writes (a test pipes both). */
export interface ChatOptions {
  model?: string;
  system?: string;
  maxTokens?: number;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

/**
 * `mnemo chat`: a conversation on one model; after each answer, the time to first token and
 * the prompt tokens that were cached, by source (the request's `why` record).
 */
export async function chat(gw: GatewayClient, o: ChatOptions): Promise<number> {
  const output = o.output ?? process.stdout;
  const model = o.model ?? (await gw.json<ModelList>('/v1/models')).data?.[0]?.id;
  if (!model) throw new Error('the cluster serves no model yet');
  const messages: Array<{ role: string; content: string }> = o.system ? [{ role: 'system', content: o.system }] : [];
  const sessionId = `chat-${randomUUID()}`;
  const rl = createInterface({ input: o.input ?? process.stdin, output, terminal: Boolean((output as { isTTY?: boolean }).isTTY) });
  output.write(`chatting with ${model} (session ${sessionId}); an empty line or Ctrl-D ends\n`);
  // readline's question() never settles once its input ends (Ctrl-D, a pipe's end): race it.
  const closed = new Promise<null>((res) => rl.once('close', () => res(null)));
  try {
    for (;;) {
      const line = await Promise.race([rl.question('> '), closed]).catch(() => null);
      if (line === null || !line.trim()) break;
      messages.push({ role: 'user', content: line });
      let answer = '';
      const turn = await gw.chatStream(
        { model, messages, session_id: sessionId, ...(o.maxTokens ? { max_tokens: o.maxTokens } : {}) },
        (t) => {
          answer += t;
          output.write(t);
        },
      );
      messages.push({ role: 'assistant', content: answer });
      let kv: RequestKv | null = null;
      try {
        kv = turn.id ? await gw.json<RequestKv>(`/v1/requests/${turn.id}/kv`) : null;
      } catch {
        kv = null; // an older cluster, or the record is gone: the line says sources are unknown
      }
      output.write(`\n${turnLine(turn, kv)}\n`);
    }
  } finally {
    rl.close();
  }
  return 0;
}
