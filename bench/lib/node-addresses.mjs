// Where a benchmark's nodes listen for their peers, as their heartbeats announce it.
import { decodeMessage, HeartbeatSchema, Subjects } from '@mnemo/proto';

/** Each node's gRPC address (for kvSources), from the heartbeats: resolves once every one of `nodeIds` has sent one. */
export async function grpcAddresses(nc, nodeIds) {
  const addresses = new Map();
  for await (const m of nc.subscribe(Subjects.HEARTBEAT)) {
    const hb = decodeMessage(HeartbeatSchema, m.data);
    addresses.set(hb.nodeId, hb.grpcAddress);
    if (nodeIds.every((id) => addresses.has(id))) break;
  }
  return addresses;
}
