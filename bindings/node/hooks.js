'use strict';
// Hooks, error and not-found handlers: how one request's chain runs, in Fastify's order.
//
// The core decides which hooks a request meets (the app's, then each `register` scope's down to
// the route's) and sends their slots with the request; this module runs them, with the handler,
// in the one trip to the JavaScript thread that runs the handler anyway. Requests the core
// refused (validation, no route) come here only when a hook or handler must see them: their
// `onRequest` hooks run, then the refusal is thrown (an `HttpError` with `statusCode`, and
// `validation` for a 422) into the scope's error handler (`setErrorHandler`) or, for a 404, its
// not-found handler (`setNotFoundHandler`); without one, the core's own answer is sent.

const fs = require('node:fs');
const path = require('node:path');
const { AsyncResource } = require('node:async_hooks');

/** Fastify's hook names, with the ones that mean the same here (validation is the core's, so
 * what runs before it runs on request; what runs before serialisation runs on send). */
const PHASE_OF = {
  onRequest: 'onRequest',
  preParsing: 'onRequest',
  preValidation: 'onRequest',
  preHandler: 'preHandler',
  preSerialization: 'onSend',
  onSend: 'onSend',
  onError: 'onError',
};

/** Fastify hooks that have no counterpart here, and why. */
const NOT_OFFERED = {
  onResponse: 'it would run after the response is sent; log in onSend, or use accessLog',
  onTimeout: "the core answers a route's timeout itself (504); the handler's ctx.signal aborts",
  onRequestAbort: "a handler's ctx.signal aborts when its request is given up",
};

/**
 * What hooks and handlers answer through (Fastify's `reply`): `code()`/`status()`, `header()`,
 * `headers()`, `type()`, `getHeader()`, `removeHeader()`, `send()`. A hook that sends ends the
 * chain: the handler is not called.
 */
/** `reply.raw`: Node's `ServerResponse` names over a reply (see `Reply#raw`). */
class RawReply {
  constructor(reply) { this._reply = reply; }

  get statusCode() { return this._reply.statusCode; }

  set statusCode(code) { this._reply.code(code); }

  get headersSent() { return this._reply.sent; }

  get writableEnded() { return this._reply.sent; }

  setHeader(name, value) { this._reply.header(name, value); return this; }

  getHeader(name) { return this._reply.getHeader(name); }

  getHeaders() { return this._reply.getHeaders(); }

  hasHeader(name) { return this._reply.hasHeader(name); }

  removeHeader(name) { this._reply.removeHeader(name); }

  writeHead(statusCode, headers) {
    this._reply.code(statusCode);
    if (headers && typeof headers === 'object') this._reply.headers(headers);
    return this;
  }

  end(body) {
    this._reply.send(body === undefined || typeof body === 'function' ? '' : body);
    return this;
  }

  write() {
    throw new TypeError('ferrule: reply.raw.write() is not offered: the core writes the response; send a body or a stream with reply.send()');
  }
}

/** What `callNotFound()` sends: the dispatcher answers it as a 404 no route took. */
const NOT_FOUND = Symbol('ferrule.callNotFound');

/** A file a reply answers with (`reply.sendFile`), sent by the core from `path`. */
class SentFile {
  constructor(filePath) {
    this.path = filePath;
    this.status = null;
    this.headers = {};
  }
}

class Reply {
  /** `app`: whose static root `sendFile` names files below. */
  constructor(statusCode, app = null) {
    this._statusCode = statusCode;
    this._app = app;
    this.sent = false;
    this.payload = undefined;
    this._headers = [];
    this._codeSet = false;
    /** How many times `code()` was called: what an error handler set itself is told from the
     * status the reply was given for the error it handles. */
    this._codeCalls = 0;
    /** While the scope's not-found handler answers: its own failure is then the app's error. */
    this._inNotFound = false;
    /** Called by `send()`: a `done`-style hook waited on may answer without calling `done`. */
    this._onSent = null;
    /** The request this reply answers (set by the dispatcher). */
    this._request = null;
  }

  /** The request this reply answers (Fastify's `reply.request`). */
  get request() { return this._request; }

  /** The app (Fastify's `reply.server`). */
  get server() { return this._app; }

  /** The request's logger (Fastify's `reply.log`). */
  get log() { return this._request?.log; }

  /** What `sendFile` names files below without a root of its own (the app's first static root). */
  get _fileRoot() { return this._app?._fileRoot ?? null; }

  /** That root's mount's `dotfiles` and `followSymlinks`. */
  get _fileRules() { return this._app?._fileRules ?? null; }

  code(statusCode) {
    // Refused where it is set, as Fastify's FST_ERR_BAD_STATUS_CODE, not as a 500 later.
    const code = Number(statusCode);
    if (!Number.isInteger(code) || code < 100 || code > 599) {
      throw new TypeError(`ferrule: reply.code(${JSON.stringify(statusCode)}) is not a status code (100 to 599)`);
    }
    this._statusCode = code;
    this._codeSet = true;
    this._codeCalls += 1;
    return this;
  }

  status(statusCode) {
    return this.code(statusCode);
  }

  /**
   * Fastify's `reply.raw` (Node's `ServerResponse`), as far as the core lets a handler reach
   * it: the status and headers, read and set (`statusCode`, `setHeader`, `writeHead`, …),
   * `headersSent`, and `end(body)`, which sends. The core writes the bytes, so `write()` is
   * refused by name; a stream goes to `reply.send(stream)`. Plugins that read the status
   * through it (@fastify/auth) work as in Fastify.
   */
  get raw() {
    if (this._raw === undefined) this._raw = new RawReply(this);
    return this._raw;
  }

  /** The status so far; set (`reply.statusCode = 201`) as `code()` sets it, as Fastify's is. */
  get statusCode() { return this._statusCode; }

  set statusCode(statusCode) { this.code(statusCode); }

  /**
   * Sets a header; `set-cookie` adds a line each time, as Fastify's does, where others replace.
   * No value is an empty one, as Fastify's default makes it (not the text `undefined`).
   */
  header(name, value = '') {
    const lower = String(name).toLowerCase();
    if (lower !== 'set-cookie') this.removeHeader(lower);
    for (const one of Array.isArray(value) ? value : [value]) this._headers.push([lower, String(one)]);
    return this;
  }

  headers(object) {
    for (const [name, value] of Object.entries(object)) this.header(name, value);
    return this;
  }

  type(contentType) {
    return this.header('content-type', contentType);
  }

  getHeader(name) {
    const wanted = String(name).toLowerCase();
    const values = this._headers.filter(([key]) => key === wanted).map(([, value]) => value);
    return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
  }

  getHeaders() {
    const headers = {};
    for (const [name] of this._headers) headers[name] = this.getHeader(name);
    return headers;
  }

  hasHeader(name) {
    return this.getHeader(name) !== undefined;
  }

  /** Fastify's `reply.serialize(payload)`: the JSON text of `payload` (the route's response
   * schema still filters what is sent). */
  serialize(payload) {
    return JSON.stringify(payload);
  }

  removeHeader(name) {
    const wanted = String(name).toLowerCase();
    this._headers = this._headers.filter(([key]) => key !== wanted);
    return this;
  }

  /**
   * Fastify's `redirect(url[, code])` (or v4's `redirect(code, url)`): a 302, or the code given
   * here or set before with `code()`.
   */
  redirect(url, code) {
    if (typeof url === 'number') [url, code] = [code, url];
    if (code !== undefined || !this._codeSet) this.code(code ?? 302);
    return this.header('location', String(url)).send();
  }

  /**
   * Fastify's `reply.callNotFound()`: answers as if no route had taken the request — the
   * scope's not-found handler (`setNotFoundHandler`), else the core's 404 — with the onSend
   * hooks after it.
   */
  callNotFound() {
    this.send(NOT_FOUND);
    return this;
  }

  /**
   * @fastify/static's `reply.sendFile(filename[, rootPath])`: answers with the file `filename`
   * names below `rootPath` (by default the root of the app's first `app.static()`). The core
   * sends it from disk as a mount sends its files: its type from its name, ETag and
   * Last-Modified with 304s, a Range answered (206, 416). A name that climbs out of the root,
   * or a file that is not there, is a 404. @fastify/static's options object (`maxAge`,
   * `cacheControl`, …) is refused by name: set those headers with `reply.header()`.
   */
  sendFile(filename, rootPath, options) {
    if (rootPath !== null && typeof rootPath === 'object') [rootPath, options] = [undefined, rootPath];
    const offered = Object.keys(options ?? {});
    if (offered.length > 0) throw new TypeError(`ferrule: reply.sendFile option ${offered[0]} is not offered (set headers with reply.header(); the core answers ranges and validators)`);
    const root = rootPath ?? this._fileRoot;
    if (typeof root !== 'string') throw new TypeError('ferrule: reply.sendFile needs a root: pass one, or serve a directory with app.static({ root })');
    const name = String(filename);
    // A NUL names no file: a 404, as a mount answers it (it was a 500).
    if (name.includes('\0')) return this.callNotFound();
    const base = path.resolve(root);
    const full = path.resolve(base, name.replace(/^[/\\]+/, ''));
    if (full !== base && !full.startsWith(base + path.sep)) return this.callNotFound();
    // The app's static root keeps its mount's rules: hidden files only with `dotfiles`, a
    // symlink that leads out of the root only with `followSymlinks`. Both were sent (found by a
    // probe; the README says these helpers read below that root as the mount does). A root
    // given here has no mount: it is read as @fastify/static reads one, symlinks and all (a
    // Bazel test's files are all symlinks).
    const rules = rootPath === undefined || path.resolve(rootPath) === this._fileRoot ? this._fileRules : null;
    if (rules && !rules.dotfiles && path.relative(base, full).split(path.sep).some((part) => part.startsWith('.'))) return this.callNotFound();
    let real = null;
    try {
      real = fs.realpathSync(full);
    } catch {
      // Not there: the core answers 404.
    }
    if (real !== null && rules && !rules.followSymlinks) {
      const realBase = fs.realpathSync(base);
      if (real !== realBase && !real.startsWith(realBase + path.sep)) return this.callNotFound();
    }
    // A directory is its index.html, as @fastify/static sends it; without one, a 404 (a 500 before).
    if (real !== null && fs.statSync(real).isDirectory()) {
      const index = path.join(full, 'index.html');
      return fs.existsSync(index) && fs.statSync(index).isFile() ? this.send(new SentFile(index)) : this.callNotFound();
    }
    return this.send(new SentFile(full));
  }

  /**
   * @fastify/static's `reply.download(filename[, name])`: `sendFile` as an attachment, saved
   * under `name` (by default the file's own name).
   */
  download(filename, name) {
    const saved = String(name ?? path.basename(String(filename)));
    const quoted = encodeURIComponent(saved);
    this.header('content-disposition', quoted === saved ? `attachment; filename="${saved}"` : `attachment; filename*=UTF-8''${quoted}`);
    this.sendFile(filename);
    // A name that climbs out of the root is not found: no attachment names it (found by a
    // README probe: the 404 said `filename="secret.pdf"`).
    if (!(this.payload instanceof SentFile)) this.removeHeader('content-disposition');
    return this;
  }

  /**
   * Answers with `payload`. A second call is ignored with a warning, as Fastify's is: the
   * first answer stands (`if (bad) reply.code(400).send(…)` without a `return`). An Error is
   * answered as the handler's failure would be (its `statusCode`, the error handler).
   */
  send(payload) {
    if (this.sent) {
      process.emitWarning('reply.send() was called after the reply was sent; the first answer stands (did you forget to return reply?)', { code: 'FERRULE_REPLY_ALREADY_SENT' });
      return this;
    }
    this.sent = true;
    this.payload = payload;
    if (this._onSent !== null) this._onSent();
    return this;
  }

  /** `[name, value, …]` for the core. */
  flatHeaders() {
    return this._headers.flat();
  }
}

/**
 * Calls a hook as Fastify does: an `async` function (or one returning a Promise) is awaited; one
 * that takes a `done` callback after its arguments is called back.
 */
function callHook(hook, args) {
  if (hook.length > args.length) {
    return new Promise((resolve, reject) => {
      const returned = hook(...args, (error, value) => (error ? reject(error) : resolve(value)));
      // A Promise it returns settles it too, as Fastify's hook runner takes either.
      if (isThenable(returned)) returned.then(resolve, reject);
    });
  }
  return hook(...args);
}

/** Whether `value` is a Promise (or any thenable) to wait for. */
function isThenable(value) {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function';
}

/**
 * Calls a request hook now, with `arity` arguments (`ctx, reply`, and `payload` for onSend). One
 * that takes a `done` callback after them and calls it before returning, as most do, gives its
 * value back at once (or throws its error); one that calls it later gives a Promise, as does an
 * `async` hook. Waiting only where a hook makes the chain wait keeps a request's hooks in its
 * one synchronous turn, as Fastify's callback-based hook runner does.
 */
function callHookNow(hook, arity, ctx, reply, payload) {
  if (hook.length <= arity) return arity === 2 ? hook(ctx, reply) : hook(ctx, reply, payload);
  let called = false;
  let failure;
  let value;
  let settle = null;
  const done = (error, result) => {
    // Where `done` is called is where Fastify goes on: inside `storage.run(store, done)`, the
    // chain after it sees the store (@fastify/request-context, a hook's own AsyncLocalStorage).
    const context = !error && arity === 2 ? new AsyncResource('ferrule.done') : null;
    if (settle !== null) return settle(error, result, context);
    called = true;
    failure = error;
    value = result;
    doneContext = context;
    return undefined;
  };
  // One that threw after calling `done` left its context here; this hook's is its own.
  doneContext = null;
  const returned = arity === 2 ? hook(ctx, reply, done) : hook(ctx, reply, payload, done);
  if (called) {
    if (failure) throw failure;
    return value;
  }
  // A request hook that answers with reply.send() need not call `done` (Fastify's "respond to
  // a request from a hook"): its chain ends there, now or when it sends.
  if (arity === 2 && reply.sent) return undefined;
  const waited = new Promise((resolve, reject) => {
    let settled = false;
    settle = (error, result, context = null) => {
      if (settled) return undefined;
      settled = true;
      reply._onSent = null;
      waited[DONE_CONTEXT] = context;
      return error ? reject(error) : resolve(result);
    };
    if (arity === 2) reply._onSent = () => settle(null, undefined);
    // A hook that takes `done` and returns a Promise instead of calling it (@fastify/helmet's)
    // goes on when the Promise settles: Fastify's hook runner takes either.
    if (isThenable(returned)) returned.then((result) => settle(null, result), (error) => settle(error ?? new Error('ferrule: a hook rejected without a reason')));
  });
  return waited;
}

/** The async context the last request hook called `done` in, taken once by the chain. */
let doneContext = null;

/** On a hook's Promise from `callHookNow`: the context its `done` was called in, if it was. */
const DONE_CONTEXT = Symbol('ferrule.doneContext');

/**
 * The async context of the `done` a request hook just called, if it called one (then the
 * chain goes on in it): taken, so the next hook starts clean.
 */
function takeDoneContext() {
  const context = doneContext;
  doneContext = null;
  return context;
}

module.exports = { PHASE_OF, NOT_OFFERED, NOT_FOUND, DONE_CONTEXT, Reply, SentFile, callHook, callHookNow, isThenable, takeDoneContext };
