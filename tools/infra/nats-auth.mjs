import { randomBytes } from 'node:crypto';

/**
 * Least-privilege NATS: one user per service (one per node), each allowed only the subjects its
 * role needs (docs/security.md has the table). Replies to requests a user received are allowed by
 * `allow_responses`, so no responder needs publish rights on anyone's inbox; each service reads
 * replies on an inbox prefix of its own (`_INBOX_<role>`, libs/service-kit natsInboxPrefix), so
 * no service can read another's replies — the gateway's token streams included.
 */

const V = 'mnemo.v1';

/** The inbox prefix of a role (what libs/service-kit natsInboxPrefix gives the same service). */
export const inboxPrefix = (/** @type {string} */ role, /** @type {string} */ nodeId = '') =>
  role === 'node' ? `_INBOX_node.${nodeId}` : `_INBOX_${role}`;

/**
 * Subjects a role may publish and subscribe.
 * @param {'scheduler' | 'gateway' | 'profiler' | 'node'} role @param {string} [nodeId]
 * @returns {{ publish: string[], subscribe: string[] }}
 */
export function rolePermissions(role, nodeId = '') {
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

/** A node's NATS user name. */
export const nodeUser = (/** @type {string} */ nodeId) => `node-${nodeId}`;

/**
 * Users (random passwords) for the scheduler, gateway and profiler and one per node id, and the
 * nats-server `authorization` block that admits them, each with its permissions.
 * @param {{ nodes: string[], password?: () => string }} opts
 * @returns {{ users: Record<string, { user: string, password: string }>, conf: string }}
 */
export function natsUsers(opts) {
  const password = opts.password ?? (() => randomBytes(18).toString('base64url'));
  /** @type {Record<string, { user: string, password: string }>} */
  const users = {};
  const entries = [];
  for (const role of /** @type {const} */ (['scheduler', 'gateway', 'profiler'])) {
    users[role] = { user: role, password: password() };
    entries.push(userEntry(users[role], rolePermissions(role)));
  }
  for (const id of opts.nodes) {
    users[`node:${id}`] = { user: nodeUser(id), password: password() };
    entries.push(userEntry(users[`node:${id}`], rolePermissions('node', id)));
  }
  return { users, conf: authorizationBlock(entries) };
}

/**
 * The `authorization` block with password references to environment variables instead of values
 * (nats-server expands `$NAME`): for a config file that lives in the repo (docker-compose, k8s).
 * @param {Array<{ role: 'scheduler' | 'gateway' | 'profiler' | 'node', nodeId?: string, user: string, passwordEnv: string }>} list
 */
export function natsUsersFromEnv(list) {
  return authorizationBlock(list.map((u) => userEntry({ user: u.user, password: `$${u.passwordEnv}` }, rolePermissions(u.role, u.nodeId))));
}

/** @param {{ user: string, password: string }} u @param {{ publish: string[], subscribe: string[] }} p */
function userEntry(u, p) {
  const list = (/** @type {string[]} */ xs) => `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;
  const pass = u.password.startsWith('$') ? u.password : JSON.stringify(u.password);
  return (
    `    { user: ${JSON.stringify(u.user)}, password: ${pass},\n` +
    `      permissions: { publish: { allow: ${list(p.publish)} }, subscribe: { allow: ${list(p.subscribe)} },` +
    ` allow_responses: true } }`
  );
}

/** @param {string[]} entries */
function authorizationBlock(entries) {
  return `authorization {\n  users: [\n${entries.join(',\n')}\n  ]\n}\n`;
}
