/**
 * How the scheduler reads one heartbeat against what it knows of the node. A boot id is drawn
 * at every process start, so a heartbeat under a known node id with another boot id comes from a
 * restarted node: its running requests and device KV died with the old process even though no
 * heartbeat was missed (a supervisor can restart a node faster than the node timeout). That
 * reads as the old incarnation going down, then the new one joining. An empty boot id (a node
 * that does not send one) never counts as a restart.
 */
export interface BeatVerdict {
  /** The known incarnation is gone: take it out of routing and announce it down. */
  readonly oldDown: boolean;
  /**
   * `join`: register the sender as new; `refresh`: update the known entry; `leave`: a goodbye
   * from the known incarnation (out of routing, no node-down: it drains its own requests);
   * `none`: nothing to register.
   */
  readonly membership: 'join' | 'refresh' | 'leave' | 'none';
}

export function classifyBeat(
  known: { readonly bootId: string } | undefined,
  beat: { readonly bootId: string; readonly accepting: boolean },
): BeatVerdict {
  if (!known) return { oldDown: false, membership: beat.accepting ? 'join' : 'none' };
  const restarted = known.bootId !== '' && beat.bootId !== '' && known.bootId !== beat.bootId;
  if (restarted) return { oldDown: true, membership: beat.accepting ? 'join' : 'none' };
  return { oldDown: false, membership: beat.accepting ? 'refresh' : 'leave' };
}
