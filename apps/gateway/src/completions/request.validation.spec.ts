import { ErrorCode } from '@mnemo/kv-core';
import { toOpenAiError } from '../errors/openai-error.mapper.js';
import { parseChatRequest } from './chat-request.parser.js';
import { DEFAULT_COMPLETION_MAX_TOKENS, parseCompletionRequest } from './completion-request.parser.js';

const chat = { model: 'mnemo-tiny', messages: [{ role: 'user', content: 'hi' }] };
const completion = { model: 'mnemo-tiny', prompt: 'hi' };

/** What a client would receive for a body the parser rejects. */
function rejection(parse: () => unknown): { status: number; code: string | null; param: string | null } {
  try {
    parse();
  } catch (e) {
    const { status, body } = toOpenAiError(e);
    return { status, code: body.error.code, param: body.error.param };
  }
  throw new Error('expected a rejection');
}

describe(parseChatRequest.name, () => {
  const bad: Array<[string, unknown, string | null]> = [
    ['body is not an object', [1, 2], null],
    ['body is a string', 'hello', null],
    ['model missing', { messages: chat.messages }, 'model'],
    ['model not a string', { ...chat, model: 7 }, 'model'],
    ['messages missing', { model: 'm' }, 'messages'],
    ['messages not an array', { ...chat, messages: 'hi' }, 'messages'],
    ['messages empty', { ...chat, messages: [] }, 'messages'],
    ['message not an object', { ...chat, messages: ['hi'] }, 'messages[0]'],
    ['role invalid', { ...chat, messages: [{ role: 'wizard', content: 'x' }] }, 'messages[0].role'],
    ['role missing', { ...chat, messages: [{ content: 'x' }] }, 'messages[0].role'],
    ['content a number', { ...chat, messages: [{ role: 'user', content: 42 }] }, 'messages[0].content'],
    ['content null', { ...chat, messages: [{ role: 'user', content: null }] }, 'messages[0].content'],
    [
      'content an image part',
      { ...chat, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] },
      'messages[0].content[0]',
    ],
    ['second message broken', { ...chat, messages: [...chat.messages, { role: 'user' }] }, 'messages[1].content'],
    ['max_tokens zero', { ...chat, max_tokens: 0 }, 'max_tokens'],
    ['max_tokens negative', { ...chat, max_tokens: -3 }, 'max_tokens'],
    ['max_tokens fractional', { ...chat, max_tokens: 1.5 }, 'max_tokens'],
    ['max_tokens a string', { ...chat, max_tokens: '10' }, 'max_tokens'],
    ['max_completion_tokens zero', { ...chat, max_completion_tokens: 0 }, 'max_completion_tokens'],
    ['temperature above 2', { ...chat, temperature: 2.01 }, 'temperature'],
    ['temperature negative', { ...chat, temperature: -0.1 }, 'temperature'],
    ['temperature a string', { ...chat, temperature: 'hot' }, 'temperature'],
    ['top_p zero', { ...chat, top_p: 0 }, 'top_p'],
    ['top_p above 1', { ...chat, top_p: 1.5 }, 'top_p'],
    ['n = 2', { ...chat, n: 2 }, 'n'],
    ['n = 0', { ...chat, n: 0 }, 'n'],
    ['stream not a boolean', { ...chat, stream: 'yes' }, 'stream'],
    ['stream_options not an object', { ...chat, stream: true, stream_options: true }, 'stream_options'],
    ['include_usage not a boolean', { ...chat, stream: true, stream_options: { include_usage: 1 } }, 'include_usage'],
    ['stop a number', { ...chat, stop: 5 }, 'stop'],
    ['stop with 5 strings', { ...chat, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    ['stop with an empty string', { ...chat, stop: [''] }, 'stop'],
    ['seed fractional', { ...chat, seed: 1.5 }, 'seed'],
    ['seed negative', { ...chat, seed: -1 }, 'seed'],
    ['session_id a number', { ...chat, session_id: 5 }, 'session_id'],
    ['session_id empty', { ...chat, session_id: '' }, 'session_id'],
    ['priority fractional', { ...chat, priority: 0.5 }, 'priority'],
    ['priority out of range', { ...chat, priority: 1e9 }, 'priority'],
    ['tools requested', { ...chat, tools: [{ type: 'function', function: { name: 'f' } }] }, 'tools'],
    ['logprobs requested', { ...chat, logprobs: true }, 'logprobs'],
    ['json response format', { ...chat, response_format: { type: 'json_object' } }, 'response_format'],
    ['ignore_eos not a boolean', { ...chat, ignore_eos: 'yes' }, 'ignore_eos'],
  ];
  it.each(bad)('%s → 400 invalid_request', (_name, body, param) => {
    expect(rejection(() => parseChatRequest(body, 't'))).toEqual({ status: 400, code: ErrorCode.InvalidRequest, param });
  });

  it('maps a valid request with defaults', () => {
    const sut = parseChatRequest(chat, 'tenant-1');
    expect(sut).toEqual({
      stream: false,
      includeUsage: false,
      command: expect.objectContaining({
        operation: 'chat.completions',
        tenant: 'tenant-1',
        model: 'mnemo-tiny',
        input: { kind: 'chat', messages: [{ role: 'user', content: 'hi' }] },
        maxTokens: undefined,
        temperature: 1,
        topP: 1,
        stop: [],
        ignoreEos: false,
        priority: 0,
      }),
    });
  });

  it('maps every supported field', () => {
    const sut = parseChatRequest(
      {
        ...chat,
        messages: [
          { role: 'system', content: 'be brief' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
        ],
        max_tokens: 9,
        max_completion_tokens: 7,
        temperature: 0,
        top_p: 0.5,
        n: 1,
        seed: 42,
        stop: 'END',
        stream: true,
        stream_options: { include_usage: true },
        session_id: 's-1',
        priority: 3,
        ignore_eos: true,
        user: 'ignored',
        tools: [],
      },
      't',
    );
    expect(sut.stream).toBe(true);
    expect(sut.includeUsage).toBe(true);
    expect(sut.command).toMatchObject({
      input: {
        kind: 'chat',
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'ab' },
        ],
      },
      maxTokens: 7,
      temperature: 0,
      topP: 0.5,
      seed: 42,
      stop: ['END'],
      sessionId: 's-1',
      priority: 3,
      ignoreEos: true,
    });
  });
});

describe(parseCompletionRequest.name, () => {
  const bad: Array<[string, unknown, string | null]> = [
    ['prompt missing', { model: 'm' }, 'prompt'],
    ['prompt a number', { ...completion, prompt: 3 }, 'prompt'],
    ['prompt an object', { ...completion, prompt: { text: 'x' } }, 'prompt'],
    ['several prompts', { ...completion, prompt: ['a', 'b'] }, 'prompt'],
    ['several token prompts', { ...completion, prompt: [[1], [2]] }, 'prompt'],
    ['token ids negative', { ...completion, prompt: [1, -2] }, 'prompt'],
    ['token ids fractional', { ...completion, prompt: [1.5] }, 'prompt'],
    ['empty token list', { ...completion, prompt: [] }, 'prompt'],
    ['echo requested', { ...completion, echo: true }, 'echo'],
    ['suffix requested', { ...completion, suffix: 'x' }, 'suffix'],
    ['best_of 2', { ...completion, best_of: 2 }, 'best_of'],
    ['max_tokens zero', { ...completion, max_tokens: 0 }, 'max_tokens'],
    ['top_p negative', { ...completion, top_p: -1 }, 'top_p'],
  ];
  it.each(bad)('%s → 400 invalid_request', (_name, body, param) => {
    expect(rejection(() => parseCompletionRequest(body, 't'))).toEqual({ status: 400, code: ErrorCode.InvalidRequest, param });
  });

  const good: Array<[string, unknown, unknown]> = [
    ['a string', 'hello', { kind: 'text', text: 'hello' }],
    ['one string in an array', ['hello'], { kind: 'text', text: 'hello' }],
    ['token ids', [1, 2, 3], { kind: 'tokens', tokens: [1, 2, 3] }],
    ['one token list in an array', [[4, 5]], { kind: 'tokens', tokens: [4, 5] }],
    ['an empty string', '', { kind: 'text', text: '' }],
  ];
  it.each(good)('accepts %s', (_name, prompt, input) => {
    expect(parseCompletionRequest({ ...completion, prompt }, 't').command.input).toEqual(input);
  });

  it('defaults max_tokens to 16 like the OpenAI completions API', () => {
    expect(parseCompletionRequest(completion, 't').command.maxTokens).toBe(DEFAULT_COMPLETION_MAX_TOKENS);
  });
});
