import { ConfigError } from './config.loader.js';

/**
 * Runs a service's bootstrap; configuration problems are printed as one JSON line
 * listing all of them and the process exits non-zero. SIGINT/SIGTERM call `stop`
 * once (graceful: drain, finish or cancel in-flight work, close connections).
 */
export function bootOrExit(service: string, start: () => Promise<{ stop: () => Promise<void> }>): void {
  start().then(
    (handle) => {
      let stopping = false;
      const onSignal = (signal: string) => {
        if (stopping) return;
        stopping = true;
        log(service, 'info', `received ${signal}, shutting down`);
        const force = setTimeout(() => process.exit(1), 10_000);
        force.unref();
        handle.stop().then(
          () => process.exit(0),
          (e) => {
            log(service, 'error', 'shutdown failed', { err: String(e) });
            process.exit(1);
          },
        );
      };
      process.on('SIGINT', () => onSignal('SIGINT'));
      process.on('SIGTERM', () => onSignal('SIGTERM'));
    },
    (e) => {
      if (e instanceof ConfigError) log(service, 'error', 'invalid configuration', { problems: e.problems });
      else log(service, 'error', 'failed to start', { err: e instanceof Error ? e.stack : String(e) });
      process.exit(1);
    },
  );
}

function log(service: string, level: string, msg: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(JSON.stringify({ level, time: new Date().toISOString(), service, msg, ...fields }) + '\n');
}
