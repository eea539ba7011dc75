// `node scripts/compose-nats.mjs` writes deploy/nats/compose.conf (docker-compose's NATS users,
// @mnemo/testkit nats.compose.ts); `--env` prints fresh random passwords and the peer token for .env.
import { loadTestkit } from './testkit.mjs';

const { COMPOSE_NATS_CONF, composeNatsConf, composeNatsEnv } = await loadTestkit();
if (process.argv.includes('--env')) {
  for (const line of composeNatsEnv()) console.log(line);
} else {
  const { writeFileSync } = await import('node:fs');
  writeFileSync(COMPOSE_NATS_CONF, composeNatsConf());
  console.log(`wrote ${COMPOSE_NATS_CONF}`);
}
