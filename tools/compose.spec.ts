import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

// There is no Docker engine where tests run, but docker-compose validates a file without one.
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const hasCompose = spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0;
if (!hasCompose)
  console.warn(
    'docker-compose.yml not validated: docker-compose is not installed (apt-get install -y --no-install-recommends docker-compose)',
  );
const itWithCompose = hasCompose ? it : it.skip;

describe('docker-compose.yml', () => {
  const compose = (...args: string[]) =>
    execFileSync('docker-compose', ['-f', join(root, 'docker-compose.yml'), ...args], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });

  itWithCompose('is valid', () => {
    expect(() => compose('config', '--quiet')).not.toThrow();
  });

  itWithCompose('defines the infrastructure and every service', () => {
    const services = compose('config', '--services').trim().split('\n').sort();
    expect(services).toEqual(['gateway', 'nats', 'node-a', 'node-b', 'postgres', 'profiler', 'scheduler']);
  });

  itWithCompose('restarts every service that dies (restart: unless-stopped)', () => {
    const config = compose('config');
    const services = compose('config', '--services').trim().split('\n');
    expect(config.match(/restart: unless-stopped/g)).toHaveLength(services.length);
  });
});
