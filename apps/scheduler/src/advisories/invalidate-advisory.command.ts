/** Drop one of the tenant's advisories. */
export class InvalidateAdvisoryCommand {
  constructor(
    readonly tenant: string,
    readonly advisoryId: string,
  ) {}
}
