/**
 * Codes of failures raised by the native addon; the strings are the C++ `StatusCodeName`s
 * (src/native/core/status.cc). Branch on `code`, never on `message`.
 */
export enum NativeErrorCode {
  InvalidArgument = 'invalid_argument',
  OutOfRange = 'out_of_range',
  /** Ranges of one batch overlap where they must not (two writes, or a write over a read). */
  RangeConflict = 'range_conflict',
  /** SSD offsets/lengths not multiples of the device's block size (O_DIRECT needs them). */
  Misaligned = 'misaligned',
  /** A path that must exist does not (e.g. opening an SSD pool without `bytes`). */
  NotFound = 'not_found',
  OutOfMemory = 'out_of_memory',
  /** `close()` was called (or the environment is shutting down). */
  Closed = 'closed',
  /** The platform refuses what was asked (e.g. a filesystem without O_DIRECT, mbind refused). */
  Unsupported = 'unsupported',
  CudaUnavailable = 'cuda_unavailable',
  CudaError = 'cuda_error',
  /** A read or write failed on the device (the errno text is in the message). */
  IoError = 'io_error',
  Internal = 'internal',
}

/**
 * The error the addon throws (it is handed this class at start-up and constructs it from
 * C++). Arguments the TypeScript wrapper can check itself fail earlier with plain
 * `TypeError` / `RangeError` carrying Node-style codes (`ValidationCode`).
 */
export class NativeError extends Error {
  readonly code: NativeErrorCode;

  constructor(message: string, code: string) {
    super(message);
    this.name = 'NativeError';
    this.code = code as NativeErrorCode;
  }
}

/** Codes on the `TypeError`/`RangeError`s thrown by argument validation (Node's spelling). */
export enum ValidationCode {
  InvalidArgType = 'ERR_INVALID_ARG_TYPE',
  InvalidArgValue = 'ERR_INVALID_ARG_VALUE',
  OutOfRange = 'ERR_OUT_OF_RANGE',
}

export interface CodedError extends Error {
  code: string;
}

export function typeError(message: string): CodedError {
  return Object.assign(new TypeError(message), { code: ValidationCode.InvalidArgType });
}

export function rangeError(message: string, code: ValidationCode = ValidationCode.OutOfRange): CodedError {
  return Object.assign(new RangeError(message), { code });
}

/** Where a call came from: captured before an async native call, attached to its rejection. */
export interface CallSite {
  stack?: string;
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- any function is a valid frame boundary
export function captureCallSite(boundary: Function): CallSite {
  const site: CallSite = {};
  Error.captureStackTrace(site, boundary);
  return site;
}

/** Replaces `err`'s frames (a native worker's completion has none useful) with the caller's. */
export function withSite(err: unknown, site: CallSite): unknown {
  if (err instanceof Error && site.stack !== undefined) {
    const frames = site.stack.slice(site.stack.indexOf('\n') + 1);
    err.stack = `${err.name}: ${err.message}\n${frames}`;
  }
  return err;
}

/**
 * Runs an async native call so that a rejection carries the caller's stack: errors created
 * on the JS thread after a native worker finished have no useful frames of their own
 * (sharp does the same in lib/input.mjs).
 */
export async function withCallerStack<T>(call: () => Promise<T>): Promise<T> {
  const site: { stack?: string } = {};
  Error.captureStackTrace(site, withCallerStack);
  try {
    return await call();
  } catch (err) {
    if (err instanceof Error && site.stack !== undefined) {
      const frames = site.stack.slice(site.stack.indexOf('\n') + 1);
      err.stack = `${err.name}: ${err.message}\n${frames}`;
    }
    throw err;
  }
}

/** The NativeError for an object used after `close()`: the same code the addon uses. */
export function closedError(what: string): NativeError {
  return new NativeError(`${what} is closed`, NativeErrorCode.Closed);
}
