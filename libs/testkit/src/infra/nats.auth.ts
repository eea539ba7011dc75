import { randomBytes } from 'node:crypto';

/**
 * Least-privilege NATS: one user per service (one per node), each allowed only the subjects its
 * role needs (docs/security.md has the table). Replies to requests a user received are allowed by
 * `allow_responses`, so no responder needs publish rights on anyone's inbox; each service reads
 * replies on an inbox prefix of its own (`_INBOX_<role>`, libs/service-kit natsInboxPrefix), so
 * no service can read another's replies — the gateway's token streams included.
 */

const V = 'mnemo.v1';

export type NatsRole = 'scheduler' | 'gateway' | 'profiler' | 'node';

/** A user name and its password (or a `$ENV` reference to it). */
interface UserEntry {
  user: string;
  password: string;
}
interface Permissions {
  publish: string[];
  subscribe: string[];
}

/** The inbox prefix of a role (what libs/service-kit natsInboxPrefix gives the same service). */
export const inboxPrefix = (role: NatsRole | string, nodeId = ''): string => (role === 'node' ? `_INBOX_node.${nodeId}` : `_INBOX_${role}`);

/** Subjects a role may publish and subscribe. */
export function rolePermissions(role: NatsRole, nodeId = ''): Permissions {
  switch (role) {
    case 'scheduler':
      return {
        publish: [
          `${V}.nodes.down`,
          `${V}.nodes.kv-report`,
          `${V}.node.*.infer`,
          `${V}.node.*.cancel`,
          `${V}.node.*.prefetch`,
          `${V}.node.*.forget`,
          `${V}.node.*.why`,
          `${V}.scheduler.why-record`,
        ],
        subscribe: [
          `${V}.scheduler.>`,
          `${V}.nodes.heartbeat`,
          `${V}.nodes.kv-events`,
          `${V}.profiler.frontier.updated`,
          `${inboxPrefix('scheduler')}.>`,
        ],
      };
    case 'gateway':
      return {
        publish: [
          `${V}.scheduler.schedule`,
          `${V}.scheduler.models.list`,
          `${V}.scheduler.advise`,
          `${V}.scheduler.invalidate`,
          `${V}.scheduler.sessions.get`,
          `${V}.scheduler.sessions.delete`,
          `${V}.scheduler.why`,
          `${V}.scheduler.status`,
          `${V}.node.*.cancel`,
          `${V}.node.*.flow`,
          `${V}.tokenizers.*`,
        ],
        subscribe: [`${V}.nodes.down`, `${inboxPrefix('gateway')}.>`],
      };
    case 'profiler':
      return {
        publish: [`${V}.profiler.frontier.updated`],
        subscribe: [`${V}.profiler.models.>`, `${V}.profiler.pairs.>`, `${V}.profiler.plan`, `${inboxPrefix('profiler')}.>`],
      };
    case 'node':
      // `*`: one user for every node — what a Kubernetes StatefulSet can give, since its pods share one template.
      if (nodeId !== '*' && !/^[A-Za-z0-9_-]+$/.test(nodeId))
        throw new RangeError(`a node user needs a node id ([A-Za-z0-9_-]+) or *, got ${JSON.stringify(nodeId)}`);
      return {
        // Token events go to the gateway's inbox named in the request (not a NATS reply subject).
        publish: [`${V}.nodes.heartbeat`, `${V}.nodes.kv-events`, `${V}.profiler.plan`, `${inboxPrefix('gateway')}.>`],
        subscribe: [
          `${V}.node.${nodeId}.>`,
          `${V}.nodes.kv-report`,
          `${V}.tokenizers.*`,
          `${V}.profiler.frontier.updated`,
          `${inboxPrefix('node', nodeId)}.>`,
        ],
      };
    default:
      throw new RangeError(`no NATS role ${JSON.stringify(role)}`);
  }
}

/** A user whose password nats-server reads from the environment variable `passwordEnv`. */
export interface EnvNatsUser {
  role: NatsRole;
  nodeId?: string;
  user: string;
  passwordEnv: string;
}

/** A node's NATS user name. */
export const nodeUser = (nodeId: string): string => `node-${nodeId}`;

/**
 * Users (random passwords) for the scheduler, gateway and profiler and one per node id, and the
 * nats-server `authorization` block that admits them, each with its permissions. `users` keys:
 * scheduler, gateway, profiler and `node:<id>`.
 */
export function natsUsers(opts: { nodes: string[]; password?: () => string }): { users: Record<string, UserEntry>; conf: string } {
  const password = opts.password ?? (() => randomBytes(18).toString('base64url'));
  const users: Record<string, UserEntry> = {};
  const entries: string[] = [];
  for (const role of ['scheduler', 'gateway', 'profiler'] as const) {
    const u = (users[role] = { user: role, password: password() });
    entries.push(userEntry(u, rolePermissions(role)));
  }
  for (const id of opts.nodes) {
    const u = (users[`node:${id}`] = { user: nodeUser(id), password: password() });
    entries.push(userEntry(u, rolePermissions('node', id)));
  }
  return { users, conf: authorizationBlock(entries) };
}

/**
 * The `authorization` block with password references to environment variables instead of values
 * (nats-server expands `$NAME`): for a config file that lives in the repo (docker-compose, k8s).
 */
export function natsUsersFromEnv(list: ReadonlyArray<EnvNatsUser>): string {
  return authorizationBlock(list.map((u) => userEntry({ user: u.user, password: `$${u.passwordEnv}` }, rolePermissions(u.role, u.nodeId))));
}

function userEntry(u: UserEntry, p: Permissions): string {
  const list = (xs: string[]) => `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;
  const pass = u.password.startsWith('$') ? u.password : JSON.stringify(u.password);
  return (
    `    { user: ${JSON.stringify(u.user)}, password: ${pass},\n` +
    `      permissions: { publish: { allow: ${list(p.publish)} }, subscribe: { allow: ${list(p.subscribe)} },` +
    ` allow_responses: true } }`
  );
}

function authorizationBlock(entries: string[]): string {
  return `authorization {\n  users: [\n${entries.join(',\n')}\n  ]\n}\n`;
}
