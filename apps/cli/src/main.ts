// mnemo — the operator's command line: run the local cluster, look at it, talk to it, ask why.
import { Command } from 'commander';
import { bench, chat, profile, status, up, why } from './commands.js';
import { GatewayClient } from './gateway.client.js';

interface GlobalOptions {
  url?: string;
  apiKey?: string;
  adminKey?: string;
}

const program = new Command();
const gw = () => {
  const o = program.opts<GlobalOptions>();
  return new GatewayClient({ url: o.url, apiKey: o.apiKey, adminKey: o.adminKey });
};
const out = (s: string) => process.stdout.write(s);
const act = (fn: () => Promise<number>) => async () => {
  try {
    process.exitCode = await fn();
  } catch (e) {
    process.stderr.write(`mnemo: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
};

program
  .name('mnemo')
  .description('Mnemo, a KV-cache-centric LLM serving layer: run it, watch it, talk to it, ask why.')
  .option('--url <url>', 'gateway address (MNEMO_URL)', process.env.MNEMO_URL)
  .option('--api-key <key>', 'API key (MNEMO_API_KEY)', process.env.MNEMO_API_KEY)
  .option('--admin-key <key>', 'admin key for answers that reveal other tenants (MNEMO_ADMIN_KEY)', process.env.MNEMO_ADMIN_KEY);

program
  .command('up')
  .description('start the local cluster (npm start): NATS, Postgres, scheduler, two nodes, profiler, gateway')
  .action(act(() => up()));
program
  .command('status')
  .description('nodes, load, KV per tier and routed hit rates')
  .action(act(() => status(gw(), out)));
program
  .command('chat')
  .description('talk to a model; after each answer: time to first token and cached tokens by source')
  .option('-m, --model <id>', 'model (default: the first /v1/models lists)')
  .option('-s, --system <text>', 'system prompt')
  .option('--max-tokens <n>', 'longest answer', (v) => Number(v))
  .action((o: { model?: string; system?: string; maxTokens?: number }) => act(() => chat(gw(), o))());
program
  .command('bench <name> [args...]')
  .description('run a benchmark (npm run bench -- NAME): writes bench/results/NAME.json and its plot')
  .action((name: string, args: string[] | undefined) => act(() => bench(name, args ?? []))());
program
  .command('profile <base> <derived>')
  .description('profile a (base → derived) pair for DroidSpeak: job progress, then the heatmap path')
  .option('-o, --out <file>', 'where to save the heatmap (default heatmap-BASE-DERIVED.svg)')
  .action((base: string, derived: string, o: { out?: string }) => act(() => profile(gw(), base, derived, o, out))());
program
  .command('why <request-id>')
  .description("where each chunk of a request's prompt came from, or why it missed (accepts the chatcmpl-… id)")
  .option('--json', 'the raw answer of GET /v1/requests/{id}/kv')
  .action((id: string, o: { json?: boolean }) => act(() => why(gw(), id, o, out))());

await program.parseAsync();
