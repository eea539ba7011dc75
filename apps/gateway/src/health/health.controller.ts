import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ServiceMetrics } from '@mnemo/service-kit';
import { NatsReadiness } from './nats.readiness.js';

/** Ops endpoints: open (no API key), so probes and scrapers need no secret. */
@Controller()
export class HealthController {
  constructor(
    @Inject(NatsReadiness) private readonly nats: NatsReadiness,
    @Inject(ServiceMetrics) private readonly metrics: ServiceMetrics,
  ) {}

  @Get('healthz')
  healthz(): { status: string } {
    return { status: 'ok' };
  }

  /** Ready = NATS connected: without it no request can be scheduled. */
  @Get('readyz')
  readyz(@Res() res: Response): void {
    const ok = this.nats.ready;
    res.status(ok ? 200 : 503).json({ status: ok ? 'ready' : 'not_ready', nats: ok ? 'connected' : 'disconnected' });
  }

  @Get('metrics')
  async metricsText(@Res() res: Response): Promise<void> {
    const body = await this.metrics.registry.metrics();
    res.status(200).type(this.metrics.registry.contentType).send(body);
  }
}
