import { ErrorCode } from '@mnemo/kv-core';
import { parseAdviseBody } from './advise.command.js';

describe(parseAdviseBody.name, () => {
  it('reads every field, with defaults for the optional ones', () => {
    expect(parseAdviseBody({ session_id: 's', model: 'm' }, 't')).toEqual({
      tenant: 't',
      sessionId: 's',
      model: 'm',
      expectedArrivalUnixMs: 0,
      ordered: false,
      priority: 0,
    });
    expect(
      parseAdviseBody({ session_id: 's', model: 'm', expected_arrival: 1_700_000_000_000, ordered: true, priority: 3 }, 't'),
    ).toMatchObject({
      expectedArrivalUnixMs: 1_700_000_000_000,
      ordered: true,
      priority: 3,
    });
  });

  it.each<[string, object, string]>([
    ['missing session_id', { model: 'm' }, 'session_id'],
    ['empty session_id', { session_id: '', model: 'm' }, 'session_id'],
    ['session_id too long', { session_id: 'x'.repeat(257), model: 'm' }, 'session_id'],
    ['session_id not a string', { session_id: 5, model: 'm' }, 'session_id'],
    ['missing model', { session_id: 's' }, 'model'],
    ['expected_arrival a string', { session_id: 's', model: 'm', expected_arrival: 'soon' }, 'expected_arrival'],
    ['expected_arrival negative', { session_id: 's', model: 'm', expected_arrival: -1 }, 'expected_arrival'],
    ['ordered not a boolean', { session_id: 's', model: 'm', ordered: 'yes' }, 'ordered'],
    ['priority fractional', { session_id: 's', model: 'm', priority: 1.5 }, 'priority'],
  ])('rejects %s as invalid_request naming the field', (_n, body, param) => {
    expect(() => parseAdviseBody(body as Record<string, unknown>, 't')).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidRequest, details: { param } }),
    );
  });
});
