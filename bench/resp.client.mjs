// A minimal RESP2 client for the tiers bench's Redis baseline: binary-safe bulk strings,
// pipelined commands over one connection, replies in order. Only what the bench sends.
import { connect } from 'node:net';

export class RespClient {
  #socket;
  #buf = Buffer.alloc(0);
  /** Received data not yet joined into #buf: joined only once a whole reply can be there (no quadratic copying of large values). */
  #parts = [];
  #partBytes = 0;
  #need = 0;
  #waiting = [];

  static connect(host, port) {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RespClient(socket));
      });
    });
  }

  constructor(socket) {
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (d) => {
      this.#parts.push(d);
      this.#partBytes += d.length;
      if (this.#buf.length + this.#partBytes < this.#need) return;
      this.#buf = Buffer.concat([this.#buf, ...this.#parts]);
      this.#parts = [];
      this.#partBytes = 0;
      this.#drain();
    });
    socket.on('error', (e) => this.#failAll(e));
    socket.on('close', () => this.#failAll(new Error('redis connection closed')));
  }

  /** Sends every command before reading any reply (what a client at its best does). */
  pipeline(commands) {
    const replies = commands.map(() => new Promise((resolve, reject) => this.#waiting.push({ resolve, reject })));
    for (const args of commands) {
      const parts = [Buffer.from(`*${args.length}\r\n`)];
      for (const a of args) {
        const b = Buffer.isBuffer(a) ? a : Buffer.from(String(a));
        parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
      }
      this.#socket.write(Buffer.concat(parts));
    }
    return Promise.all(replies);
  }

  close() {
    return new Promise((resolve) => this.#socket.end(resolve));
  }

  #failAll(e) {
    for (const w of this.#waiting.splice(0)) w.reject(e);
  }

  #drain() {
    while (this.#waiting.length) {
      const r = this.#parse(0);
      if (!r) return;
      this.#need = 0;
      this.#buf = this.#buf.subarray(r.end);
      const w = this.#waiting.shift();
      if (r.value instanceof Error) w.reject(r.value);
      else w.resolve(r.value);
    }
  }

  /** One reply starting at `at`, or null while it is incomplete. */
  #parse(at) {
    const eol = this.#buf.indexOf('\r\n', at);
    if (eol < 0) return null;
    const type = String.fromCharCode(this.#buf[at]);
    const line = this.#buf.toString('latin1', at + 1, eol);
    if (type === '+') return { value: line, end: eol + 2 };
    if (type === '-') return { value: new Error(line), end: eol + 2 };
    if (type === ':') return { value: Number(line), end: eol + 2 };
    if (type === '$') {
      const n = Number(line);
      if (n < 0) return { value: null, end: eol + 2 };
      if (this.#buf.length < eol + 2 + n + 2) {
        this.#need = eol + 2 + n + 2;
        return null;
      }
      return { value: this.#buf.subarray(eol + 2, eol + 2 + n), end: eol + 2 + n + 2 };
    }
    throw new Error(`unexpected RESP reply type ${JSON.stringify(type)}`);
  }
}
