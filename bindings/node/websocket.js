'use strict';
/**
 * A WebSocket as a handler of `app.ws(path, handler)` holds it, in the `ws` package's shape: an
 * EventEmitter ('message' with `(data, isBinary)`, 'close' with `(code, reason)`) that is also
 * an async iterable of messages, with `send`, `ping` ('pong' answers it), `close`,
 * `terminate`, `readyState`, `protocol` and `bufferedAmount`. Text arrives as a string, binary
 * as a Buffer (`data.toString()` works on both); a string is sent as text, a Buffer (or typed
 * array) as binary.
 *
 * Messages wait in the core until the glue takes them, all at once per wake-up. Sends are
 * queued in the core and never wait; a client that leaves more than `wsSendBufferBytes` unread
 * is closed with 1008. As with `ws`, a handler's return does not close the socket; a handler
 * that throws (or rejects) closes it with 1011.
 */
const { EventEmitter } = require('node:events');

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;
/** Messages kept for a consumer that has not started yet (an async handler before its `for await`);
 * past them, the rest wait in the core, which stops reading from the client. */
const UNREAD_LIMIT = 1024;

class WebSocket extends EventEmitter {
  constructor(native, id, fail, call = (native_) => native_()) {
    super();
    this._native = native;
    /** Runs a native call, its `KIND|message` errors thrown as `KIND` (index.js's nativeCall). */
    this._call = call;
    this._id = id;
    this._fail = fail || ((error) => { throw error; });
    this.readyState = OPEN;
    this.protocol = native.socketProtocol(id) || '';
    this._unread = [];
    /** Taking from the core stopped at UNREAD_LIMIT with no consumer (`_resume` starts it again). */
    this._held = false;
    this._waiting = [];
    this._iterators = 0;
    this._end = null;
    /** The async resource of the request that opened it (set by `Sockets.opened`). */
    this._scope = null;
    this.on('newListener', (event) => {
      if (event === 'message' && this._unread.length > 0) this._later(this._flushUnread);
    });
  }

  get bufferedAmount() {
    return this.readyState === CLOSED ? 0 : this._native.socketBuffered(this._id);
  }

  /** Queues `data`; `callback(error)` is called once it is queued (or refused: the socket is closed). */
  send(data, options, callback) {
    if (typeof options === 'function') callback = options;
    let payload = data;
    if (ArrayBuffer.isView(data) && !Buffer.isBuffer(data)) payload = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    else if (data instanceof ArrayBuffer) payload = Buffer.from(data);
    else if (typeof data === 'number') payload = String(data);
    // As `ws`: anything else becomes bytes as Buffer.from() makes them (an Array of bytes, a
    // boxed string), and an object it cannot read is a TypeError here, never "[object Object]".
    else if (typeof data !== 'string' && !Buffer.isBuffer(data)) payload = Buffer.from(data ?? '');
    // As `ws`'s `send(text, { binary: true })`: the text's UTF-8 in a binary frame.
    if (typeof payload === 'string' && options !== null && typeof options === 'object' && options.binary === true) payload = Buffer.from(payload);
    const sent = this.readyState === OPEN && this._native.socketSend(this._id, payload);
    if (typeof callback === 'function') {
      const error = sent ? undefined : new Error('WebSocket is not open: readyState ' + this.readyState);
      this._later(() => callback(error));
    }
  }

  /** Pings the client; its answer is a 'pong' event with the same data, as with `ws`. */
  ping(data = Buffer.alloc(0)) {
    if (this.readyState !== OPEN) return;
    this._native.socketPing(this._id, Buffer.isBuffer(data) ? data : Buffer.from(String(data)));
  }

  /**
   * `ws`'s `terminate()`, for a client that stopped answering pings: closes with 1001 (going
   * away) and waits for nothing more from this side; 'close' follows. Where `ws` drops the
   * connection outright, the core, which owns it, still sends the close frame after what is
   * queued.
   */
  terminate() {
    if (this.readyState === CLOSED) return;
    this._call(() => this._native.socketClose(this._id, 1001, 'terminated'));
    this.readyState = CLOSING;
  }

  /**
   * Closes with `code` (default 1000) once what was sent before has gone; 'close' follows. As
   * with `ws`, a code no server may send (1005, say) or a reason over 123 bytes throws.
   */
  close(code = 1000, reason = '') {
    if (this.readyState >= CLOSING) return;
    if (typeof code !== 'number') throw new TypeError('ferrule: a WebSocket close code is a number');
    this._call(() => this._native.socketClose(this._id, code, String(reason)));
    this.readyState = CLOSING;
  }

  /** Every message until the connection closes; leaving the loop early leaves the socket open. */
  [Symbol.asyncIterator]() {
    this._iterators += 1;
    let done = false;
    const finish = () => {
      if (!done) { done = true; this._iterators -= 1; }
      return { done: true, value: undefined };
    };
    this._later(this._flushUnread);
    return {
      next: () => {
        if (done) return Promise.resolve({ done: true, value: undefined });
        if (this._unread.length > 0) {
          const [data] = this._unread.shift();
          if (this._held) this._later(this._resume);
          return Promise.resolve({ done: false, value: data });
        }
        if (this._end !== null) return Promise.resolve(finish());
        return new Promise((resolve) => this._waiting.push(resolve)).then((value) => (value === undefined ? finish() : { done: false, value }));
      },
      return: () => Promise.resolve(finish()),
      [Symbol.asyncIterator]() { return this; },
    };
  }

  /**
   * Runs `fn` in a microtask of the socket's own scope. A bare `queueMicrotask` would run it in
   * a fresh resource: what a 'message' listener `enterWith`s there would be gone by the next
   * message, which `Sockets.arrived` delivers in the scope.
   */
  _later(fn) {
    queueMicrotask(() => (this._scope === null ? fn.call(this) : this._scope.runInAsyncScope(fn, this)));
  }

  /** The core has messages (or the end) for this socket: take them all in one call. */
  _arrived() {
    // Until a take finds nothing: that take arms the next wake-up ([-4, id]).
    for (;;) {
      // No consumer yet, and a full backlog: the rest stay in the core, which stops reading
      // from the client, until one comes. The oldest were dropped here before, silently
      // (found by a probe: 3,000 sent to a handler that awaited first, 1,024 echoed).
      if (this._unread.length >= UNREAD_LIMIT && this._waiting.length === 0 && this.listenerCount('message') === 0) {
        this._held = true;
        return;
      }
      const taken = this._native.socketTake(this._id);
      if (taken === null) return;
      // The answers to `ping()` (`ws`'s heartbeat: a client that stops answering is gone).
      if (taken[2] !== null) for (const data of taken[2]) this.emit('pong', data);
      for (let i = 3; i < taken.length; i++) this._deliver(taken[i]);
      if (taken[0] !== null) {
        this._closed(taken[0], taken[1]);
        return;
      }
      if (taken.length === 3 && taken[2] === null) return;
    }
  }

  _deliver(data) {
    const isBinary = typeof data !== 'string';
    if (this._waiting.length > 0) {
      this._waiting.shift()(data);
      if (this.listenerCount('message') > 0) this._emitMessage(data, isBinary);
      return;
    }
    if (this.listenerCount('message') > 0) {
      this._emitMessage(data, isBinary);
      return;
    }
    this._unread.push([data, isBinary]);
  }

  _flushUnread() {
    while (this._unread.length > 0 && (this._waiting.length > 0 || this.listenerCount('message') > 0)) {
      const [data, isBinary] = this._unread.shift();
      if (this._waiting.length > 0) this._waiting.shift()(data);
      if (this.listenerCount('message') > 0) this._emitMessage(data, isBinary);
    }
    this._resume();
  }

  /** Takes from the core again once a consumer has made room below UNREAD_LIMIT. */
  _resume() {
    if (this._held && this._unread.length < UNREAD_LIMIT) {
      this._held = false;
      this._arrived();
    }
  }

  /** A listener that throws is the handler failing: logged, and the socket closed with 1011. */
  _emitMessage(data, isBinary) {
    try {
      this.emit('message', data, isBinary);
    } catch (error) {
      this._fail(error);
    }
  }

  _closed(code, reason) {
    this._end = [code, reason];
    this.readyState = CLOSED;
    for (const resolve of this._waiting.splice(0)) resolve(undefined);
    this.emit('close', code, reason);
  }
}

WebSocket.CONNECTING = CONNECTING;
WebSocket.OPEN = OPEN;
WebSocket.CLOSING = CLOSING;
WebSocket.CLOSED = CLOSED;

/**
 * The app's open sockets, by the core's id: `[-3, id, route, …]` opens one and runs its handler,
 * `[-4, id]` delivers what arrived.
 */
class Sockets {
  constructor(native, handlers, onError, call) {
    this.native = native;
    this.call = call;
    this.handlers = handlers;
    this.onError = onError;
    this.open = new Map();
  }

  /** `scope`: the request's async resource, which its messages are delivered in. */
  opened(id, route, ctx, scope) {
    let socket = null;
    const failed = (error) => {
      this.onError(ctx, error);
      socket.close(1011, '');
    };
    socket = new WebSocket(this.native, id, failed, this.call);
    socket._scope = scope;
    this.open.set(id, socket);
    socket.once('close', () => this.open.delete(id));
    try {
      const result = this.handlers[route](socket, ctx);
      if (result !== null && typeof result === 'object' && typeof result.then === 'function') result.then(undefined, failed);
    } catch (error) {
      failed(error);
    }
    // What arrived while the handler set up: taken once it has registered its listeners.
    socket._later(socket._arrived);
  }

  arrived(id) {
    const socket = this.open.get(id);
    if (socket) socket._scope.runInAsyncScope(socket._arrived, socket);
  }

  /**
   * The server stopped: what arrived last (each socket's end, 1001 from the drain) is taken
   * now, since no batch brings it; a socket the core has no end for has lost its connection.
   */
  stopped() {
    for (const [id, socket] of [...this.open]) {
      // A 'close' listener that throws is its handler failing (logged), and stops no other.
      try {
        this.arrived(id);
        if (socket.readyState !== CLOSED) socket._scope.runInAsyncScope(socket._closed, socket, 1006, '');
      } catch (error) {
        socket._fail(error);
      }
    }
  }
}

module.exports = { WebSocket, Sockets };
