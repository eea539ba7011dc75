// The node's ChunkTransfer gRPC endpoint: address advertised in heartbeats, contract served.
import { credentials, status, type Client, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { decodeMessage, HeartbeatSchema, loadGrpcServices, Subjects, type Heartbeat } from '@mnemo/proto';
import { Cluster } from './cluster.js';

type FetchClient = Client & {
  FetchChunks(req: object): ClientReadableStream<{ key: string; missing: boolean; layerStart: number; layerEnd: number }>;
};

function collect<T>(stream: ClientReadableStream<T>): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const out: T[] = [];
    stream.on('data', (d: T) => out.push(d));
    stream.on('error', reject);
    stream.on('end', () => resolve(out));
  });
}

describe('ChunkTransfer (node ↔ node gRPC)', () => {
  let cluster: Cluster;
  let client: FetchClient;

  beforeAll(async () => {
    cluster = await Cluster.start({ nodes: 1 });
    const { clients } = loadGrpcServices();
    client = new clients.ChunkTransfer(cluster.nodes[0].grpcAddress, credentials.createInsecure()) as unknown as FetchClient;
  });
  afterAll(async () => {
    client?.close();
    await cluster?.stop();
  });

  it('advertises its address in heartbeats', async () => {
    const node = cluster.nodes[0];
    const hb = await new Promise<Heartbeat>((resolve) => {
      const sub = cluster.nc.subscribe(Subjects.HEARTBEAT, {
        callback: (_e, msg) => {
          const h = decodeMessage(HeartbeatSchema, msg.data);
          if (h.nodeId !== node.nodeId) return;
          sub.unsubscribe();
          resolve(h);
        },
      });
    });
    expect(hb.grpcAddress).toBe(node.grpcAddress);
    expect(hb.grpcAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(hb).toMatchObject({ accepting: true, models: [expect.objectContaining({ id: 'mnemo-tiny', engine: 'sim' })] });
  });

  it('streams one answer per key, in order (missing: a sim node keeps no KV bytes)', async () => {
    const keys = ['0'.repeat(32), 'f'.repeat(32)];
    const chunks = await collect(client.FetchChunks({ keys, layerStart: 0, layerEnd: 4 }));
    expect(chunks.map((c) => [c.key, c.missing, c.layerStart, c.layerEnd])).toEqual([
      [keys[0], true, 0, 4],
      [keys[1], true, 0, 4],
    ]);
  });

  it.each([
    ['a malformed key', { keys: ['xyz'], layerStart: 0, layerEnd: 1 }],
    ['an empty layer range', { keys: ['0'.repeat(32)], layerStart: 2, layerEnd: 2 }],
  ])('refuses %s with INVALID_ARGUMENT', async (_n, req) => {
    await expect(collect(client.FetchChunks(req))).rejects.toMatchObject({ code: status.INVALID_ARGUMENT } satisfies Partial<ServiceError>);
  });
});
