import type { TwinEvent } from '../core/event.queue.js';
import type { TwinNodeConfig, TwinNodeNet } from './twin-node.config.js';

type Load = Parameters<TwinNodeNet['heartbeat']>[1];

/**
 * A twin node's heartbeats, as the live node sends them: one every `heartbeatMs` from time 0
 * (PublishHeartbeatUseCase), and one when a request leaves (FinishBeatTrigger).
 */
export class TwinNodeHeartbeats {
  private lastFinishBeat = -Infinity;
  private finishBeatDue = false;
  private readonly finishBeat: TwinEvent = {
    fire: (now) => {
      this.finishBeatDue = false;
      this.lastFinishBeat = now;
      this.beat();
    },
  };

  constructor(
    private readonly config: TwinNodeConfig,
    private readonly net: TwinNodeNet,
    private readonly load: () => Load,
  ) {
    const beat: TwinEvent = {
      fire: () => {
        this.beat();
        net.events.after(config.heartbeatMs, beat);
      },
    };
    net.events.after(0, beat);
  }

  /** A request left (FinishBeatTrigger): a heartbeat now, or at the end of the period if one went out within it. */
  onRemoved(now: number): void {
    if (this.config.finishBeatMs <= 0 || this.finishBeatDue) return;
    const wait = this.lastFinishBeat + this.config.finishBeatMs - now;
    if (wait <= 0) return this.finishBeat.fire(now);
    this.finishBeatDue = true;
    this.net.events.after(wait, this.finishBeat);
  }

  private beat(): void {
    this.net.heartbeat(this.config.id, this.load());
  }
}
