// Types of compose-nats.mjs (plain ESM with JSDoc), for nats-auth.spec.ts.
import type { NatsRole } from './index.mjs';

export const COMPOSE_NATS_USERS: Array<{ role: NatsRole; nodeId?: string; user: string; passwordEnv: string }>;
export const COMPOSE_NATS_CONF: string;
export function composeNatsConf(): string;
