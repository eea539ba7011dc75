/** An advisory as the gateway sends it (AdvisoryRequest), tenant already authenticated. */
export class AdviseCommand {
  constructor(
    readonly tenant: string,
    readonly sessionId: string,
    readonly model: string,
    /** 0 = soon. */
    readonly expectedArrivalUnixMs: number,
    readonly ordered: boolean,
    readonly priority: number,
  ) {}
}
