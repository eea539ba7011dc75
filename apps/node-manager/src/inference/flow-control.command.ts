/** Backpressure from the gateway: pause or resume one attempt of a request. */
export class FlowControlCommand {
  constructor(
    readonly requestId: string,
    readonly attempt: number,
    readonly pause: boolean,
  ) {}
}
