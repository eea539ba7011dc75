import { tenantLogId, tenantOf } from '@mnemo/kv-core';
import { JsonLogger } from './json.logger.js';

describe('JsonLogger', () => {
  const capture = () => {
    const lines: Array<Record<string, unknown>> = [];
    return { lines, logger: new JsonLogger('t', 'debug', (l) => lines.push(JSON.parse(l) as Record<string, unknown>)) };
  };

  it.each([
    ['a key-derived tenant', tenantOf('sk-alpha')],
    ['the default tenant', 'default'],
    ['a tenant named by hand', 'acme-corp'],
  ])('writes %s hashed, never in clear, through emit and child loggers', (_name, tenant) => {
    const { lines, logger } = capture();
    logger.emit('info', 'request', { tenant, requestId: 'r1' });
    logger.child({ tenantId: tenant }).warn('child');
    expect(lines[0]!.tenant).toBe(tenantLogId(tenant));
    expect(lines[1]!.tenantId).toBe(tenantLogId(tenant));
    expect(JSON.stringify(lines)).not.toContain(tenant);
    expect(lines[0]!.requestId).toBe('r1');
  });

  it('gives one tenant one log id and two tenants two', () => {
    expect(tenantLogId('a')).toBe(tenantLogId('a'));
    expect(tenantLogId('a')).not.toBe(tenantLogId('b'));
    expect(tenantLogId('a')).toMatch(/^th-[0-9a-f]{12}$/);
  });
});
