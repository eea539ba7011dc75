import { ErrorCode, isChunkKey, MnemoError } from '@mnemo/kv-core';
import type { KvSource } from '@mnemo/proto';
import { parseHostPort } from '../config/host-port.parser.js';

/** Sources one request may name; the scheduler lists a handful at most. */
export const MAX_KV_SOURCES = 16;

/**
 * kv_sources are dialled and trusted for *which* keys to ask for (never for the bytes, which are
 * verified): refuse anything that is not a dialable host:port or a well-formed key list.
 */
export function checkKvSources(sources: readonly KvSource[]): void {
  if (sources.length > MAX_KV_SOURCES)
    throw new MnemoError(ErrorCode.InvalidRequest, `at most ${MAX_KV_SOURCES} kv_sources, got ${sources.length}`);
  for (const s of sources) {
    const hp = parseHostPort(s.grpcAddress);
    if (!hp || hp.port === undefined)
      throw new MnemoError(ErrorCode.InvalidRequest, `kv_sources grpc_address must be host:port, got ${JSON.stringify(s.grpcAddress)}`);
    const bad = s.chunkKeys.find((k) => !isChunkKey(k));
    if (bad !== undefined) throw new MnemoError(ErrorCode.InvalidRequest, `kv_sources chunk key is malformed: ${JSON.stringify(bad)}`);
  }
}
