import { Inject, Injectable, type InjectionToken, type OnApplicationBootstrap, type OnModuleDestroy, type Type } from '@nestjs/common';
import { PARAMTYPES_METADATA } from '@nestjs/common/constants.js';
import { NatsResponders } from './nats.responders.js';

/**
 * What a token provides: a class token its instance. A symbol or string token carries no type, so
 * the register function's parameter states it, as `@Inject(TOKEN) private readonly x: X` did.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Provided<T> = T extends abstract new (...args: never[]) => infer I ? I : any;

/** Subscribes a module's subjects; may return what undoes anything else it hooked up (run when the module is destroyed). */
export type RegisterEntryPoints<T extends readonly InjectionToken[]> = (
  nats: NatsResponders,
  ...deps: { -readonly [K in keyof T]: Provided<T[K]> }
) => void | (() => void);

/**
 * A module's NATS entry points as one provider: `register` subscribes them, with the providers
 * named in `inject`, once the application has bootstrapped — every module is initialised by
 * then, so no message reaches a use case that is not ready. Handlers keep only their subjects
 * and the mapping to their use cases; the class, constructor and bootstrap hook each used to
 * spell out are here once. `name` is the provider's class name (what Nest's errors show).
 */
export function natsEntryPoints<const T extends readonly InjectionToken[]>(
  name: string,
  inject: T,
  register: RegisterEntryPoints<T>,
): Type<OnApplicationBootstrap & OnModuleDestroy> {
  const run = register as (...deps: unknown[]) => void | (() => void);
  @Injectable()
  class EntryPoints implements OnApplicationBootstrap, OnModuleDestroy {
    private readonly deps: unknown[];
    private undo?: () => void;

    /** The responders, then what `inject` names, in its order. */
    constructor(...deps: unknown[]) {
      this.deps = deps;
    }

    onApplicationBootstrap(): void {
      this.undo = run(...this.deps) ?? undefined;
    }

    onModuleDestroy(): void {
      this.undo?.();
    }
  }
  // One constructor parameter per token: the compiler's metadata for a rest parameter would ask Nest for one `Array` more.
  Reflect.defineMetadata(PARAMTYPES_METADATA, [NatsResponders, ...inject], EntryPoints);
  [NatsResponders, ...inject].forEach((token, i) => Inject(token)(EntryPoints, undefined as never, i));
  Object.defineProperty(EntryPoints, 'name', { value: name });
  return EntryPoints;
}
