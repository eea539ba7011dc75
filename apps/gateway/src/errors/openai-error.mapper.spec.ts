import { BadRequestException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { toOpenAiError } from './openai-error.mapper.js';

describe(toOpenAiError.name, () => {
  const cases: Array<[string, unknown, number, string, string | null]> = [
    [
      'invalid request',
      new MnemoError(ErrorCode.InvalidRequest, 'bad', { param: 'model' }),
      400,
      'invalid_request_error',
      'invalid_request',
    ],
    [
      'prompt too long (OpenAI code)',
      new MnemoError(ErrorCode.PromptTooLong, 'long'),
      400,
      'invalid_request_error',
      'context_length_exceeded',
    ],
    ['unauthenticated', new MnemoError(ErrorCode.Unauthenticated, 'who'), 401, 'authentication_error', 'unauthenticated'],
    ['unknown model', new MnemoError(ErrorCode.ModelNotFound, 'no'), 404, 'not_found_error', 'model_not_found'],
    ['no node', new MnemoError(ErrorCode.NoNodeAvailable, 'none'), 503, 'service_unavailable_error', 'no_node_available'],
    ['timeout', new MnemoError(ErrorCode.Timeout, 'slow'), 504, 'timeout_error', 'timeout'],
    ['unknown route', new NotFoundException('Cannot GET /x'), 404, 'not_found_error', 'not_found'],
    [
      'malformed JSON (body-parser via Nest)',
      new BadRequestException('Unexpected token', {
        cause: Object.assign(new SyntaxError('x'), { type: 'entity.parse.failed', status: 400 }),
      }),
      400,
      'invalid_request_error',
      'invalid_request',
    ],
    [
      'oversize body (body-parser via Nest)',
      new PayloadTooLargeException('too large', {
        cause: Object.assign(new Error('x'), { type: 'entity.too.large', status: 413, limit: 10 }),
      }),
      413,
      'invalid_request_error',
      'request_too_large',
    ],
    ['a plain Error', new Error('db password is hunter2'), 500, 'server_error', 'internal'],
  ];
  it.each(cases)('%s → %i %s', (_name, e, status, type, code) => {
    const sut = toOpenAiError(e);
    expect(sut.status).toBe(status);
    expect(sut.body.error).toMatchObject({ type, code });
    expect(Object.keys(sut.body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  });

  it('keeps the param of a domain error', () => {
    expect(toOpenAiError(new MnemoError(ErrorCode.InvalidRequest, 'bad', { param: 'messages[0].role' })).body.error.param).toBe(
      'messages[0].role',
    );
  });

  it('gives 5xx an error id and hides internal details', () => {
    const sut = toOpenAiError(new Error('db password is hunter2'));
    expect(sut.errorId).toMatch(/^[0-9a-f-]{36}$/);
    expect(sut.body.error.message).toContain(sut.errorId);
    expect(sut.body.error.message).not.toContain('hunter2');
    expect(toOpenAiError(new MnemoError(ErrorCode.InvalidRequest, 'x')).errorId).toBeUndefined();
  });
});
