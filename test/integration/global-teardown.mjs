// Stops, in reverse order, only the servers global-setup.mjs started (never external ones).
export default async function globalTeardown() {
  /** @type {Array<{ stop: () => Promise<void> }>} */
  const started = globalThis.__mnemoInfra ?? [];
  globalThis.__mnemoInfra = [];
  for (const s of [...started].reverse()) await s.stop();
}
