import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolePermissions } from './nats.auth.js';
import { COMPOSE_NATS_CONF, COMPOSE_NATS_USERS, composeNatsConf, composeNatsEnv } from './nats.compose.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

describe('least-privilege NATS users (nats.auth.ts)', () => {
  const roles = ['scheduler', 'gateway', 'profiler', 'node'] as const;
  const perms = (r: (typeof roles)[number]) => rolePermissions(r, r === 'node' ? 'n1' : undefined);

  it.each([
    ['mnemo.v1.nodes.down', 'publish', ['scheduler']],
    ['mnemo.v1.nodes.down', 'subscribe', ['gateway']],
    ['mnemo.v1.node.*.infer', 'publish', ['scheduler']],
    ['mnemo.v1.scheduler.why-record', 'publish', ['scheduler']],
    ['mnemo.v1.profiler.frontier.updated', 'publish', ['profiler']],
    ['_INBOX_gateway.>', 'subscribe', ['gateway']],
  ] as const)('%s: only %s by %j', (subject, verb, who) => {
    expect(roles.filter((r) => perms(r)[verb].includes(subject))).toEqual(who);
  });

  it("gives a node its own subjects only, and no inbox but its own and the gateway's token streams", () => {
    const p = rolePermissions('node', 'n1');
    expect(p.subscribe.filter((s) => s.startsWith('mnemo.v1.node.'))).toEqual(['mnemo.v1.node.n1.>']);
    expect(p.subscribe.filter((s) => s.startsWith('_INBOX'))).toEqual(['_INBOX_node.n1.>']);
    expect(p.publish.filter((s) => s.startsWith('_INBOX'))).toEqual(['_INBOX_gateway.>']);
    expect(() => rolePermissions('node', 'a.b')).toThrow(/node id/);
  });

  it('deploy/nats/compose.conf is generated and current, and docker-compose.yml gives each service its user', () => {
    expect(readFileSync(COMPOSE_NATS_CONF, 'utf8')).toBe(composeNatsConf());
    const compose = readFileSync(join(root, 'docker-compose.yml'), 'utf8');
    for (const u of COMPOSE_NATS_USERS) {
      expect(compose).toContain(`NATS_USER: ${u.user}\n`);
      // The service and the nats container read the same variable.
      expect(compose.split(`\${${u.passwordEnv}:-`).length - 1).toBe(2);
    }
  });

  it('composeNatsEnv gives every compose NATS user a fresh password, and the peer token', () => {
    const [a, b] = [composeNatsEnv(), composeNatsEnv()];
    expect(a.map((l) => l.split('=')[0])).toEqual([...COMPOSE_NATS_USERS.map((u) => u.passwordEnv), 'NODE_PEER_TOKEN']);
    for (const line of a) expect(line).toMatch(/^[A-Z_]+=[A-Za-z0-9_-]{24,}$/);
    expect(a.filter((l, i) => l === b[i])).toEqual([]);
  });
});
