import { chunkKeys } from '@mnemo/kv-core';
import { call, EventQueue } from '../core/event.queue.js';
import { SeededRng } from '../core/seeded.rng.js';
import { ClosedLoopUsers, type InferOutcome, type TwinClient, type UserNet, type UsersOptions } from '../client/closed-loop.users.js';
import type { HoldingChange, TwinSessionTail } from '../node/node-kv.js';
import { TwinNode, type TwinNodeConfig, type TwinNodeCosts, type TwinNodeNet } from '../node/twin.node.js';
import type { TwinRequest, TwinSeq } from '../node/twin-seq.js';
import { PromptKeys } from '../node/prompt-keys.js';
import type { TwinTiers } from '../node/twin-tiers.js';
import type { TwinNodeLoad } from '../node/twin-node.config.js';
import { TwinScheduler, type TwinDispatch, type TwinSchedulerConfig } from '../scheduler/twin.scheduler.js';
import type { TwinSession } from '../workload/session.workload.js';

/** A whole cluster run: nodes, scheduler, users, costs, seed. */
export interface TwinClusterConfig {
  readonly nodes: readonly TwinNodeConfig[];
  readonly scheduler: TwinSchedulerConfig;
  readonly costs: TwinNodeCosts;
  readonly users: UsersOptions;
  /** Another client than closed-loop users (open-loop arrivals, priorities): built over the cluster's user side. */
  readonly client?: (net: UserNet, sessions: readonly TwinSession[]) => TwinClient;
  readonly tenant: string;
  readonly model: string;
  readonly seed: number;
  /** Stop after this much virtual time, ms (Infinity: when the users are done). */
  readonly untilMs?: number;
}

/** Nodes tried for one request before giving up (the scheduler's MAX_DISPATCH_ATTEMPTS). */
const MAX_DISPATCH_ATTEMPTS = 3;

interface InFlight {
  readonly request: TwinRequest;
  readonly sentAt: number;
  readonly done: (r: InferOutcome) => void;
  firstAt?: number;
  node?: string;
  /** The first dispatch reaches its node no sooner than this (the timed request path less the token event's hop). */
  readonly pathArriveAt?: number;
  /** The first token event's hop back to the client, drawn with the request path. */
  readonly tokenHopMs?: number;
}

/**
 * The cluster of the multi-round benchmark in virtual time: a scheduler, nodes and closed-loop
 * users, wired by modelled message hops (each a drawn NATS delay) and the CPU each process
 * spends per message. Every component is a twin of the live one; this class only carries
 * messages between them. One run is a pure function of its configuration, sessions and seed.
 */
export class TwinCluster implements TwinNodeNet {
  readonly events = new EventQueue();
  readonly rng: SeededRng;
  readonly nodes: TwinNode[];
  readonly scheduler: TwinScheduler;
  readonly users: TwinClient;
  private readonly byId = new Map<string, TwinNode>();
  private readonly inFlight = new Map<string, InFlight>();
  private requests = 0;
  /** Per session, the block keys of its last turn's KV: the next prompt starts with them. */
  private readonly lastKeys = new Map<string, readonly string[]>();
  /** Requests no node took. */
  failed = 0;

  constructor(
    readonly config: TwinClusterConfig,
    sessions: readonly TwinSession[],
  ) {
    this.rng = new SeededRng(config.seed);
    this.scheduler = new TwinScheduler(config.scheduler);
    this.nodes = config.nodes.map((n) => new TwinNode(n, config.costs, this));
    for (const n of this.nodes) this.byId.set(n.id, n);
    const events = this.events;
    const net: UserNet = {
      get now() {
        return events.now;
      },
      at: (t, fn) => this.events.at(t, call(fn)),
      infer: (sessionId, turn, prompt, maxTokens, done, priority) => this.infer(sessionId, turn, prompt, maxTokens, done, priority),
      advise: (sessionId, typeMs) => this.advise(sessionId, typeMs),
      endSession: (sessionId) => void this.lastKeys.delete(sessionId),
    };
    this.users = config.client ? config.client(net, sessions) : new ClosedLoopUsers(sessions, config.users, net);
  }

  /** Runs until every user is done (or `untilMs`); returns the virtual time it ended at. */
  run(): number {
    // Nodes heartbeat before the users start (the benchmark waits for every node to be known).
    this.events.run(600);
    this.users.start();
    this.events.run(this.config.untilMs ?? Infinity, () => this.users.done && this.inFlight.size === 0);
    return this.events.now;
  }

  private nats(): number {
    return this.config.costs.overheads.natsMs.draw(this.rng);
  }

  // ---- the client's side --------------------------------------------------------------------

  private infer(sessionId: string, turn: number, prompt: readonly number[], maxTokens: number, done: InFlight['done'], priority = 0): void {
    const o = this.config.costs.overheads;
    const request: TwinRequest = {
      id: `${sessionId}-${turn}-${++this.requests}`,
      tenant: this.config.tenant,
      sessionId,
      model: this.config.model,
      tokens: prompt,
      chunkKeys: chunkKeys(this.config.model, this.config.tenant, prompt),
      maxTokens,
      priority,
      kvSources: [],
      keys: new PromptKeys(this.config.model, this.config.tenant, prompt, this.lastKeys.get(sessionId)),
    };
    const sentAt = this.events.now;
    const path = o.requestPathMs?.draw(this.rng);
    const tokenHopMs = path === undefined ? undefined : this.nats();
    this.inFlight.set(request.id, {
      request,
      sentAt,
      done,
      ...(path === undefined ? {} : { pathArriveAt: sentAt + path - tokenHopMs!, tokenHopMs }),
    });
    const arrive = sentAt + (o.clientMsPerKToken * prompt.length) / 1000 + this.nats() + o.scheduleMs;
    this.events.at(
      arrive,
      call((now) => this.schedule(request, new Set(), 1, now)),
    );
  }

  private advise(sessionId: string, typeMs: number): void {
    const sentAt = this.events.now;
    this.events.at(
      sentAt + this.nats() + this.config.costs.overheads.scheduleMs,
      call((now) => {
        const a = this.scheduler.advise(this.config.tenant, sessionId, this.config.model, sentAt + typeMs, now);
        if (!a) return;
        if (a.forget) this.toNode(a.forget.nodeId, (n) => n.forget(a.forget!.advisoryId));
        const r = a.reservation;
        this.toNode(r.nodeId, (n, at) =>
          n.prefetch(
            {
              advisoryId: r.id,
              sessionId,
              chunkKeys: a.chunkKeys,
              sources: a.sources,
              expiresAtMs: r.expiresAtMs,
              priority: r.priority,
              expectedArrivalMs: r.expectedAtMs,
            },
            at,
          ),
        );
      }),
    );
  }

  // ---- the scheduler's side -------------------------------------------------------------------

  private schedule(request: TwinRequest, skipped: Set<string>, attempt: number, now: number): void {
    const d = attempt <= MAX_DISPATCH_ATTEMPTS ? this.scheduler.route(request, skipped, now) : null;
    if (!d) {
      this.failed++;
      this.inFlight.delete(request.id);
      return;
    }
    request.kvSources = d.kvSources;
    const admit = (node: TwinNode, admitAt: number) =>
      this.events.at(
        admitAt,
        call((t) => {
          const outcome = node.admit(request, t);
          const f = this.inFlight.get(request.id);
          if (f && outcome === 'admitted') f.node = node.id;
          this.events.at(
            t + this.nats(),
            call((back) => this.answered(request, d, outcome, skipped, attempt, back)),
          );
        }),
      );
    const pathArriveAt = attempt === 1 ? this.inFlight.get(request.id)?.pathArriveAt : undefined;
    if (pathArriveAt !== undefined) {
      // The timed path already holds the hop to the node and its admission work.
      const node = this.byId.get(d.nodeId);
      if (node) admit(node, Math.max(now, pathArriveAt));
      return;
    }
    this.toNode(d.nodeId, (node, at) => admit(node, at + (this.config.costs.overheads.admitMsPerKToken * request.tokens.length) / 1000));
  }

  private answered(
    request: TwinRequest,
    d: TwinDispatch,
    outcome: ReturnType<TwinNode['admit']>,
    skipped: Set<string>,
    attempt: number,
    now: number,
  ): void {
    const forget = this.scheduler.dispatched(request, d, outcome === 'admitted', now);
    if (forget && d.reservation) this.toNode(forget, (n) => n.forget(d.reservation!.id));
    if (outcome === 'admitted') return;
    if (outcome !== 'overloaded') {
      this.failed++;
      this.inFlight.delete(request.id);
      return;
    }
    skipped.add(d.nodeId);
    this.schedule(request, skipped, attempt + 1, now);
  }

  private toNode(nodeId: string, fn: (n: TwinNode, at: number) => void): void {
    const n = this.byId.get(nodeId);
    if (n)
      this.events.after(
        this.nats(),
        call((at) => fn(n, at)),
      );
  }

  // ---- the nodes' side (TwinNodeNet) ----------------------------------------------------------

  peerTiers(nodeId: string): TwinTiers | undefined {
    return this.byId.get(nodeId)?.tiers;
  }

  firstToken(seq: TwinSeq, now: number): void {
    const f = this.inFlight.get(seq.id);
    if (f) f.firstAt = now + (f.tokenHopMs ?? this.nats());
  }

  finished(seq: TwinSeq, now: number): void {
    const f = this.inFlight.get(seq.id);
    if (!f) return;
    this.inFlight.delete(seq.id);
    const keys = seq.request.keys?.chain.keys;
    if (keys) this.lastKeys.set(seq.request.sessionId, keys);
    const at = Math.max(now + this.nats(), f.firstAt ?? 0);
    this.events.at(
      at,
      call(() =>
        f.done({
          ttftMs: (f.firstAt ?? at) - f.sentAt,
          totalMs: at - f.sentAt,
          reply: seq.reply,
          cachedTokens: seq.cachedTokens,
          node: f.node ?? seq.id,
        }),
      ),
    );
  }

  publishKv(nodeId: string, changes: readonly HoldingChange[], tails: readonly TwinSessionTail[]): void {
    this.events.after(
      this.nats(),
      call(() => this.scheduler.kvEvent(nodeId, this.config.model, changes, tails)),
    );
  }

  heartbeat(nodeId: string, load: TwinNodeLoad): void {
    this.events.after(
      this.nats(),
      call((now) => this.scheduler.heartbeat(nodeId, this.config.model, load, now)),
    );
  }
}
