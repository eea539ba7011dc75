// `npm start`: a whole local Mnemo cluster in one terminal. NATS and Postgres come from
// NATS_URL / DATABASE_URL when set, else private servers on free ports (@mnemo/testkit).
// Then: scheduler, two node-managers (node-a, node-b), profiler, gateway — each
// `node apps/<app>/dist/main.js` (scripts/ensure.mjs built them). Ready once the gateway
// answers /readyz, every service's /readyz is 200 and GET /v1/models lists a model.
// Ctrl-C stops the services first, then Postgres and NATS, and exits 0. A node-manager that
// dies on its own is started again (backoff 0.5 s doubling to 10 s; more than 5 restarts in a
// minute stops everything with exit code 1) while the rest keep serving — the scheduler routes
// around it until it re-registers. Any other service that dies stops everything with exit code 1.
//
// Knobs (besides the services' own variables, passed through): GATEWAY_HOST/PORT/GRPC_PORT,
// MNEMO_API_KEYS (the example then uses the first key), MNEMO_START_ONLY=profiler,scheduler
// (start a subset; names: gateway, scheduler, node-a, node-b, profiler),
// MNEMO_START_TIMEOUT_MS (default 180000), MNEMO_LOG_FORMAT=json (JSON lines even on a terminal),
// MNEMO_RESTART=node-a,node-b (the services restarted when they die; default the node-managers,
// `none` for none), MNEMO_DEFAULT_MODEL (default fortune-base: the model every node serves, the
// gateway lists first and the example names; a tools/train/models name or a synthetic catalog id).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, makeLocalSecrets, redactUrl, startNats, startPostgres, SupervisedProcess } from '@mnemo/testkit';
import { resolveDefaultModel, trainedModelDirs } from './start.models.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const env = process.env;
const READY_TIMEOUT_MS = Number(env.MNEMO_START_TIMEOUT_MS ?? 180_000);
const pretty = process.stdout.isTTY && env.MNEMO_LOG_FORMAT !== 'json';

/** @typedef {{ name: string, app: string, env: Record<string, string>, readyUrl: string, proc?: SupervisedProcess }} Service */

const restartable = new Set(
  (env.MNEMO_RESTART ?? 'node-a,node-b')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n && n !== 'none'),
);

/** @type {Array<{ name: string, stop: () => Promise<void> }>} */
const infra = [];
/** @type {Service[]} */
const services = [];
let stopping = false;

const say = (/** @type {string} */ msg) =>
  process.stdout.write(
    pretty
      ? `\x1b[1mstart\x1b[0m    | ${msg}\n`
      : JSON.stringify({ level: 'info', time: new Date().toISOString(), service: 'start', msg }) + '\n',
  );

process.on('SIGINT', () => void shutdown(0, 'SIGINT'));
process.on('SIGTERM', () => void shutdown(0, 'SIGTERM'));
// Last resort if we die without running shutdown(): children run in their own process
// groups (so Ctrl-C reaches only us and we choose the order), so kill them here.
process.on('exit', () => {
  for (const s of services) s.proc?.killNow();
});

try {
  await main();
} catch (e) {
  process.stderr.write(`[start] ${e instanceof Error ? e.message : String(e)}\n`);
  await shutdown(1, 'start-up failed');
}

async function main() {
  // MNEMO_START_ONLY=profiler,scheduler starts a subset (debugging one service against real infra).
  const only = env.MNEMO_START_ONLY ? env.MNEMO_START_ONLY.split(',').map((n) => n.trim()) : null;
  const wanted = (/** @type {string} */ name) => only === null || only.includes(name);
  const apps = [
    ...new Set(
      [
        ['gateway', 'gateway'],
        ['scheduler', 'scheduler'],
        ['node-a', 'node-manager'],
        ['node-b', 'node-manager'],
        ['profiler', 'profiler'],
      ]
        .filter(([n]) => wanted(n))
        .map(([, a]) => a),
    ),
  ];
  const missing = apps.filter((a) => !existsSync(join(root, 'apps', a, 'dist', 'main.js')));
  if (missing.length > 0)
    throw new Error(
      `not built: ${missing.map((a) => `apps/${a}/dist/main.js`).join(', ')} — run \`npm start\` (it builds first) or \`npx tsc -b\``,
    );

  // A private NATS lets no one in: a user per service and per node (random passwords, least-privilege
  // subject permissions) and, with openssl, TLS from a private CA made for this run, which node ↔
  // node gRPC uses too (docs/security.md). A given NATS_URL uses whatever credentials it carries,
  // or NATS_USER / NATS_PASSWORD / NATS_TLS_CA from the environment.
  const secrets = env.NATS_URL ? null : makeLocalSecrets({ nodes: ['node-a', 'node-b'], log: say });
  if (secrets) infra.push({ name: 'secrets', stop: async () => secrets.remove() });
  /** @type {(role: 'scheduler' | 'gateway' | 'profiler' | 'node', nodeId?: string) => Record<string, string>} */
  const natsAuth = (role, nodeId) => (secrets ? secrets.envFor(role, nodeId) : {});
  const natsUrl = env.NATS_URL || (await startInfra('nats', () => startNats(/** @type {NonNullable<typeof secrets>} */ (secrets).nats)));
  const databaseUrl = env.DATABASE_URL || (await startInfra('postgres', startPostgres));
  if (stopping) return;

  const host = env.GATEWAY_HOST || '127.0.0.1';
  const gatewayPort = Number(env.GATEWAY_PORT || 8080);
  const grpcPort = Number(env.GATEWAY_GRPC_PORT || 50051);
  for (const [what, port] of [
    ['GATEWAY_PORT', gatewayPort],
    ['GATEWAY_GRPC_PORT', grpcPort],
  ]) {
    if (!(await isFree(port, host))) throw new Error(`port ${port} (${what}) is in use — set ${what} to another port`);
  }
  // Ops ports are internal: prefer the documented ones, fall back to free ones.
  const ops = async (/** @type {number} */ preferred) => ((await isFree(preferred, '127.0.0.1')) ? preferred : freePort());
  const base = { NATS_URL: natsUrl };
  /** @param {string} name @param {string} app @param {Record<string, string>} extra @param {string} readyUrl */
  const svc = (name, app, extra, readyUrl) => ({ name, app, env: { ...base, ...extra }, readyUrl });
  const [gatewayOpsPort, schedPort, nodeAPort, nodeBPort, profPort, profHttpPort, indexerPort] = [
    await ops(9401),
    await ops(9402),
    await ops(9411),
    await ops(9412),
    await ops(9404),
    await ops(8090),
    await ops(9480),
  ];
  const defaultModel = await resolveDefaultModel(root, env);
  // Every node serves the default model first, the synthetic mnemo-tiny (tests, benchmarks) and the other trained models
  // (the LoRA adapters merged into fortune-base as they load).
  const trained = trainedModelDirs(root);
  // Nodes give each other KV only with this shared token (node ↔ node gRPC).
  const peerToken = { NODE_PEER_TOKEN: env.NODE_PEER_TOKEN || randomBytes(18).toString('base64url') };
  // The indexer API answers only to a key: an admin one generated per run unless given.
  const indexerOn = (env.SCHEDULER_INDEXER ?? 'on') === 'on';
  const indexerKey = env.SCHEDULER_INDEXER_ADMIN_KEYS || randomBytes(18).toString('base64url');
  const nodeModels = env.NODE_MODELS ? {} : { NODE_MODELS: [...new Set([defaultModel.served, 'mnemo-tiny', ...trained])].join(',') };
  services.push(
    svc(
      'scheduler',
      'scheduler',
      {
        METRICS_PORT: String(schedPort),
        SCHEDULER_INDEXER: indexerOn ? 'on' : 'off',
        SCHEDULER_INDEXER_PORT: String(indexerPort),
        SCHEDULER_INDEXER_ADMIN_KEYS: indexerKey,
        ...natsAuth('scheduler'),
      },
      `http://127.0.0.1:${schedPort}/readyz`,
    ),
    svc(
      'node-a',
      'node-manager',
      { NODE_ID: 'node-a', METRICS_PORT: String(nodeAPort), ...peerToken, ...nodeModels, ...natsAuth('node', 'node-a') },
      `http://127.0.0.1:${nodeAPort}/readyz`,
    ),
    svc(
      'node-b',
      'node-manager',
      { NODE_ID: 'node-b', METRICS_PORT: String(nodeBPort), ...peerToken, ...nodeModels, ...natsAuth('node', 'node-b') },
      `http://127.0.0.1:${nodeBPort}/readyz`,
    ),
    svc(
      'profiler',
      'profiler',
      { DATABASE_URL: databaseUrl, METRICS_PORT: String(profPort), HTTP_PORT: String(profHttpPort), ...natsAuth('profiler') },
      `http://127.0.0.1:${profPort}/readyz`,
    ),
    svc(
      'gateway',
      'gateway',
      {
        MNEMO_DEFAULT_MODEL: defaultModel.id,
        GATEWAY_HOST: host,
        GATEWAY_PORT: String(gatewayPort),
        GATEWAY_GRPC_PORT: String(grpcPort),
        METRICS_PORT: String(gatewayOpsPort),
        GATEWAY_PROFILER_URL: `http://127.0.0.1:${profHttpPort}`,
        ...natsAuth('gateway'),
      },
      `http://127.0.0.1:${gatewayOpsPort}/readyz`,
    ),
  );
  services.splice(0, services.length, ...services.filter((s) => wanted(s.name)));
  for (const s of services) launch(s);

  if (!wanted('gateway')) {
    await waitUntilReady('', undefined, null);
    if (!stopping) say(`ready: ${services.map((s) => s.name).join(', ')} (MNEMO_START_ONLY); Ctrl-C stops everything`);
    return;
  }
  const api = `http://${urlHost(host)}:${gatewayPort}`;
  const key = (env.MNEMO_API_KEYS ?? '')
    .split(',')
    .map((k) => k.trim())
    .find((k) => k.length > 0);
  const model = await waitUntilReady(api, key, defaultModel.id);
  if (stopping) return;
  printWelcome(api, grpcPort, model, key);
  if (indexerOn && wanted('scheduler') && !env.SCHEDULER_INDEXER_ADMIN_KEYS)
    say(`KV indexer API on http://127.0.0.1:${indexerPort} (header "authorization: Bearer ${indexerKey}", this run's admin key)`);
}

/**
 * @param {string} name
 * @param {() => Promise<{ url: string, stop: () => Promise<void> }>} start
 */
async function startInfra(name, start) {
  say(`starting a private ${name} server…`);
  const server = await start();
  infra.push({ name, stop: server.stop });
  say(
    `${name} at ${redactUrl(server.url)}${name === 'nats' ? ' (a user per service and node, passwords passed to the services only)' : ''}`,
  );
  return server.url;
}

/** @param {Service} s */
function launch(s) {
  s.proc = new SupervisedProcess({
    name: s.name,
    args: [join(root, 'apps', s.app, 'dist', 'main.js')],
    cwd: root,
    env: { ...env, ...s.env },
    restart: restartable.has(s.name),
    onLine: (line) => relay(s.name, line),
    onExit: ({ code, signal, restartInMs }) => {
      if (stopping) return;
      const how = signal ?? `code ${code}`;
      if (restartInMs !== null) {
        process.stderr.write(`[start] ${s.name} exited unexpectedly (${how}); restarting in ${restartInMs} ms, the rest keep serving\n`);
        return;
      }
      const why = restartable.has(s.name) ? 'too many restarts' : 'not restartable';
      process.stderr.write(`[start] ${s.name} exited unexpectedly (${how}; ${why}); stopping the cluster\n`);
      void shutdown(1, `${s.name} exited`);
    },
  });
  s.proc.start();
}

/**
 * Pretty on a terminal (`node-a    | info  msg k=v`), else JSON lines with a `proc` field
 * (two node-managers share `service`). Non-JSON lines are wrapped as `msg`.
 * @param {string} name @param {string} line
 */
function relay(name, line) {
  /** @type {Record<string, unknown> | null} */
  let obj = null;
  if (line.startsWith('{')) {
    try {
      obj = JSON.parse(line);
    } catch {
      obj = null;
    }
  }
  if (!pretty) {
    process.stdout.write(JSON.stringify(obj ? { proc: name, ...obj } : { proc: name, level: 'info', msg: line }) + '\n');
    return;
  }
  const tag = name.padEnd(9);
  if (!obj) {
    process.stdout.write(`${tag}| ${line}\n`);
    return;
  }
  const { level, msg } = obj;
  const fields = Object.entries(obj)
    .filter(([k]) => !['level', 'msg', 'time', 'service'].includes(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  const color = level === 'error' ? '\x1b[31m' : level === 'warn' ? '\x1b[33m' : '';
  process.stdout.write(`${tag}| ${color}${String(level ?? '').padEnd(5)}\x1b[0m ${String(msg ?? '')}${fields ? ' ' + fields : ''}\n`);
}

/**
 * Polls every service's /readyz, then the gateway's model list until it lists the default
 * model (the one the example names). null: no gateway, services only.
 * @param {string} api @param {string | undefined} key @param {string | null} defaultModel
 */
async function waitUntilReady(api, key, defaultModel) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const pending = new Set(services);
  say('waiting for the services to be ready…');
  while (!stopping) {
    if (Date.now() > deadline)
      throw new Error(
        `not ready after ${READY_TIMEOUT_MS} ms: ${[...pending].map((s) => s.name).join(', ') || `${defaultModel} not listed by GET /v1/models`}`,
      );
    for (const s of [...pending]) if ((await httpStatus(s.readyUrl)) === 200) pending.delete(s);
    if (pending.size === 0 && defaultModel === null) return '';
    if (pending.size === 0 && defaultModel !== null) {
      const models = await listModels(api, key);
      if (models.includes(defaultModel)) return defaultModel;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return '';
}

/** @param {string} url @param {Record<string, string>} [headers] */
async function httpStatus(url, headers = {}) {
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** @param {string} api @param {string | undefined} key @returns {Promise<string[]>} */
async function listModels(api, key) {
  try {
    const res = await fetch(`${api}/v1/models`, {
      headers: key ? { authorization: `Bearer ${key}` } : {},
      signal: AbortSignal.timeout(2000),
    });
    if (res.status !== 200) return [];
    const body = /** @type {{ data?: Array<{ id: string }> }} */ (await res.json());
    return (body.data ?? []).map((m) => m.id);
  } catch {
    return [];
  }
}

/** @param {string} api @param {number} grpcPort @param {string} model @param {string | undefined} key */
function printWelcome(api, grpcPort, model, key) {
  const auth = key ? ` \\\n  -H 'authorization: Bearer ${key}'` : '';
  const body = JSON.stringify({ model, stream: true, max_tokens: 64, messages: [{ role: 'user', content: 'Tell me something wise.' }] });
  const text = `
Mnemo is up: REST ${api}  gRPC 127.0.0.1:${grpcPort}  (nodes node-a, node-b; Ctrl-C stops everything)

Streamed chat completion:

  curl -N ${api}/v1/chat/completions \\
  -H 'content-type: application/json'${auth} \\
  -d '${body}'

OpenAI SDK (npm i openai):

  import OpenAI from 'openai';
  const client = new OpenAI({ baseURL: '${api}/v1', apiKey: '${key ?? 'unused'}', maxRetries: 0 });
  const stream = await client.chat.completions.create({
    model: '${model}', stream: true, max_tokens: 64,
    messages: [{ role: 'user', content: 'Tell me something wise.' }],
  });
  for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');
`;
  process.stdout.write(text + '\n');
}

/**
 * Stops the gateway first (no new work), then nodes, scheduler and profiler, then
 * Postgres and NATS; exits with `code`. Idempotent.
 * @param {number} code @param {string} why
 */
async function shutdown(code, why) {
  if (stopping) return;
  stopping = true;
  say(`stopping (${why})…`);
  const order = [['gateway'], ['node-a', 'node-b'], ['scheduler', 'profiler']];
  for (const names of order) await Promise.all(services.filter((s) => names.includes(s.name)).map(stopService));
  await Promise.all(services.map(stopService));
  for (const i of [...infra].reverse()) {
    try {
      await i.stop();
    } catch (e) {
      process.stderr.write(`[start] stopping ${i.name} failed: ${String(e)}\n`);
      code = code || 1;
    }
  }
  say('stopped');
  process.exit(code);
}

/** SIGTERM (services drain and exit), SIGKILL after 15 s; no restart. @param {Service} s */
async function stopService(s) {
  await s.proc?.stop(15_000);
}

/** @param {number} port @param {string} host @returns {Promise<boolean>} */
function isFree(port, host) {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/** @param {string} host */
function urlHost(host) {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
