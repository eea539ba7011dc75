/** The zeromq module's surface we use (its own types, loaded lazily). */
export type Zmq = typeof import('zeromq');

let loaded: Promise<Zmq> | undefined;

/**
 * Loads ZeroMQ on first use. The `zeromq` package ships prebuilt binaries (linux x64/arm64,
 * darwin, win32) and its install script stays off (it would build from source and download);
 * where the binary does not load, the feature that asked for it fails with this message instead
 * of the process failing to start for everyone.
 */
export function loadZmq(feature: string): Promise<Zmq> {
  loaded ??= import('zeromq').catch((e: unknown) => {
    loaded = undefined;
    throw new Error(
      `${feature} needs ZeroMQ, and the zeromq package did not load (${e instanceof Error ? e.message : String(e)}). ` +
        'Its prebuilt binary covers linux x64/arm64, macOS and Windows: run `npm install` again, or turn the feature off.',
    );
  });
  return loaded;
}
