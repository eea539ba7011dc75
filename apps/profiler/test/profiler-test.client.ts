import type { DescMessage, MessageInitShape } from '@bufbuild/protobuf';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { decodeMessage, encodeMessage, ProfilerReplySchema, type ProfilerReply } from '@mnemo/proto';
import { startProfiler, type ProfilerHandle } from '../src/app.js';

/** Env for a profiler under test: the servers global-setup started (or NATS_URL/DATABASE_URL given). */
export function testEnv(): Record<string, string | undefined> {
  return { ...process.env, METRICS_PORT: '0', HTTP_PORT: '0', LOG_LEVEL: 'warn' };
}

export function bootProfiler(extra: Record<string, string> = {}): Promise<ProfilerHandle> {
  return startProfiler({ ...testEnv(), ...extra });
}

/** A plain NATS client speaking the profiler's protobuf contract, as other services do. */
export class ProfilerTestClient {
  private constructor(readonly nc: NatsConnection) {}

  static async connect(): Promise<ProfilerTestClient> {
    return new ProfilerTestClient(await connect({ servers: process.env.NATS_URL! }));
  }

  async request<D extends DescMessage>(subject: string, schema: D, init: MessageInitShape<D>): Promise<ProfilerReply['result']> {
    return this.requestRaw(subject, encodeMessage(schema, init));
  }

  async requestRaw(subject: string, data: Uint8Array): Promise<ProfilerReply['result']> {
    const msg = await this.nc.request(subject, data, { timeout: 10_000 });
    return decodeMessage(ProfilerReplySchema, msg.data).result;
  }

  close(): Promise<void> {
    return this.nc.drain();
  }
}

/** Unique per test run, so specs also pass against a long-lived external database. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * A profiler booted with the test environment and a NATS client for the enclosing describe block,
 * both closed after it. Read `sut` and `client` inside tests and hooks.
 */
export function profilerUnderTest(): { readonly sut: ProfilerHandle; readonly client: ProfilerTestClient } {
  let sut: ProfilerHandle | undefined;
  let client: ProfilerTestClient | undefined;
  beforeAll(async () => {
    sut = await bootProfiler();
    client = await ProfilerTestClient.connect();
  });
  afterAll(async () => {
    await client?.close();
    await sut?.stop();
  });
  return {
    get sut() {
      return sut!;
    },
    get client() {
      return client!;
    },
  };
}
