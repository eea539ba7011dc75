/**
 * Wraps an async action (a service's stop) so that repeated or concurrent calls share
 * the first run: a second SIGTERM, or a test's stop after a signal, never stops twice.
 */
export function runOnce(action: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= action());
}
