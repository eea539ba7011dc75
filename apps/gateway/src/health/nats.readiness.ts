import type { NatsConnection } from '@nats-io/transport-node';

/** Tracks whether the NATS connection is up; the gateway is ready only while it is. */
export class NatsReadiness {
  private connected = true;

  constructor(private readonly nc: NatsConnection) {
    void this.watch();
  }

  get ready(): boolean {
    return this.connected && !this.nc.isClosed();
  }

  private async watch(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect' || s.type === 'close') this.connected = false;
      else if (s.type === 'reconnect') this.connected = true;
    }
  }
}
