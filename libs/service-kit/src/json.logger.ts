import type { LoggerService } from '@nestjs/common';
import { tenantLogId } from '@mnemo/kv-core';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Fields whose values are tenant ids: the chunk-key salt, so a log line shows only tenantLogId(id). */
const TENANT_FIELDS = new Set(['tenant', 'tenantId']);

/**
 * Structured JSON lines on stdout: {"level","time","service","msg",...fields}. A `tenant` field is
 * written hashed (kv-core tenantLogId), whoever logs it: log readers need not be tenants' peers.
 */
export class JsonLogger implements LoggerService {
  constructor(
    private readonly service: string,
    private readonly minLevel: LogLevel = 'info',
    private readonly write: (line: string) => void = (l) => process.stdout.write(l + '\n'),
  ) {}

  child(fields: Record<string, unknown>): FieldLogger {
    return new FieldLogger(this, fields);
  }

  emit(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
    if (rank[level] < rank[this.minLevel]) return;
    const line: Record<string, unknown> = { level, time: new Date().toISOString(), service: this.service, msg, ...fields };
    for (const [k, v] of Object.entries(line)) {
      if (v instanceof Error) line[k] = { name: v.name, message: v.message, stack: v.stack };
      else if (TENANT_FIELDS.has(k) && typeof v === 'string') line[k] = tenantLogId(v);
    }
    this.write(JSON.stringify(line));
  }

  // NestJS LoggerService: the last optional param is the context name.
  log(message: unknown, ...rest: unknown[]): void {
    this.emit('info', String(message), ctx(rest));
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.emit('error', String(message), ctx(rest));
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.emit('warn', String(message), ctx(rest));
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.emit('debug', String(message), ctx(rest));
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.emit('debug', String(message), ctx(rest));
  }
}

export class FieldLogger {
  constructor(
    private readonly base: JsonLogger,
    private readonly fields: Record<string, unknown>,
  ) {}
  debug(msg: string, f: Record<string, unknown> = {}): void {
    this.base.emit('debug', msg, { ...this.fields, ...f });
  }
  info(msg: string, f: Record<string, unknown> = {}): void {
    this.base.emit('info', msg, { ...this.fields, ...f });
  }
  warn(msg: string, f: Record<string, unknown> = {}): void {
    this.base.emit('warn', msg, { ...this.fields, ...f });
  }
  error(msg: string, f: Record<string, unknown> = {}): void {
    this.base.emit('error', msg, { ...this.fields, ...f });
  }
}

function ctx(rest: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const last = rest[rest.length - 1];
  if (typeof last === 'string') out.context = last;
  const stack = rest.find((r) => typeof r === 'string' && r.includes('\n    at '));
  if (stack) out.stack = stack;
  return out;
}
