import { Injectable, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { natsEntryPoints } from './nats.entry-points.js';
import { NatsResponders } from './nats.responders.js';

@Injectable()
class Greeter {
  greet(who: string): string {
    return `hello ${who}`;
  }
}

const PREFIX = Symbol('PREFIX');
const responders = { marker: 'the responders' } as unknown as NatsResponders;

async function boot(entryPoints: Type<unknown>) {
  @Module({
    providers: [{ provide: NatsResponders, useValue: responders }, Greeter, { provide: PREFIX, useValue: 'mnemo' }, entryPoints],
  })
  class ProbeModule {}
  // Created means bootstrapped: createApplicationContext runs the lifecycle hooks.
  return NestFactory.createApplicationContext(ProbeModule, { logger: false });
}

describe(natsEntryPoints.name, () => {
  it('registers at bootstrap with the responders and the injected providers, in order, and undoes at close', async () => {
    const events: string[] = [];
    const EntryPoints = natsEntryPoints('ProbeNatsHandler', [Greeter, PREFIX], (nats, greeter, prefix: string) => {
      expect(nats).toBe(responders);
      events.push(`${prefix}: ${greeter.greet('nats')}`);
      return () => events.push('undone');
    });
    expect(EntryPoints.name).toBe('ProbeNatsHandler');
    const app = await boot(EntryPoints);
    expect(events).toEqual(['mnemo: hello nats']);
    await app.close();
    expect(events).toEqual(['mnemo: hello nats', 'undone']);
  });

  it('needs nothing but the responders', async () => {
    let seen: NatsResponders | undefined;
    const app = await boot(natsEntryPoints('BareNatsHandler', [], (nats) => void (seen = nats)));
    expect(seen).toBe(responders);
    await app.close();
  });
});
