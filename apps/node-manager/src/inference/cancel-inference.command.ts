/** Stop a request: its client went away or gave up, or the scheduler abandoned this attempt. */
export class CancelInferenceCommand {
  constructor(
    readonly requestId: string,
    /** Free text for logs. */
    readonly reason: string,
    /** The attempt to stop; 0 = whichever attempt this node holds. */
    readonly attempt = 0,
    /** End without a final TokenEvent (nobody waits for this attempt). */
    readonly silent = false,
  ) {}
}
