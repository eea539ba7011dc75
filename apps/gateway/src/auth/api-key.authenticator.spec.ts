import { ErrorCode } from '@mnemo/kv-core';
import { ApiKeyAuthenticator, DEFAULT_TENANT, tenantOf } from './api-key.authenticator.js';

describe(ApiKeyAuthenticator.name, () => {
  const sut = new ApiKeyAuthenticator(['sk-alpha', 'sk-beta']);

  const rejected: Array<[string, string | undefined]> = [
    ['no header', undefined],
    ['empty header', ''],
    ['wrong scheme', 'Basic sk-alpha'],
    ['bearer without key', 'Bearer '],
    ['unknown key', 'Bearer sk-gamma'],
    ['prefix of a key', 'Bearer sk-alph'],
    ['key with a suffix', 'Bearer sk-alphaa'],
    ['two tokens', 'Bearer sk-alpha sk-beta'],
  ];
  it.each(rejected)('rejects %s with unauthenticated', (_name, header) => {
    expect(() => sut.authenticate(header)).toThrow(expect.objectContaining({ code: ErrorCode.Unauthenticated }));
  });

  it('accepts each configured key and derives a distinct tenant per key', () => {
    const a = sut.authenticate('Bearer sk-alpha');
    const b = sut.authenticate('bearer   sk-beta');
    expect(a).toBe(tenantOf('sk-alpha'));
    expect(b).toBe(tenantOf('sk-beta'));
    expect(a).not.toBe(b);
    expect(a).toMatch(/^t-[0-9a-f]{32}$/);
    expect(a).not.toContain('alpha');
  });

  it('lets everyone in as the default tenant when no keys are configured', () => {
    const open = new ApiKeyAuthenticator([]);
    expect(open.enabled).toBe(false);
    expect(open.authenticate(undefined)).toBe(DEFAULT_TENANT);
    expect(open.authenticate('Bearer anything')).toBe(DEFAULT_TENANT);
  });
});
