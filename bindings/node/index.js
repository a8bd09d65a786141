'use strict';
/**
 * Ferrule for Node.js: routes declared here, served by the Rust core (ferrule.node).
 *
 *   const { App } = require('ferrule');
 *   const app = new App();
 *   app.get('/users/{id:int}', ({ params, query }) => ({ id: params.id, verbose: query.verbose }));
 *   app.post('/items', { body: itemSchema }, async ({ body }) => body);
 *   await app.listen({ host: '127.0.0.1', port: 8000 });
 *
 * Routing, parsing, coercion (`{id:int}`), JSON Schema validation, body limits and content
 * types are decided in Rust before a handler runs; a bad request gets an RFC 9457 problem
 * response without entering JavaScript.
 */
const cluster = require('node:cluster');
const native = require('./ferrule.node');

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/** An explicit response: `new Response(body, { status, headers, type })`. */
class Response {
  constructor(body = null, { status = 200, headers = {}, type } = {}) {
    this.body = body;
    this.status = status;
    this.headers = headers;
    this.type = type;
  }
}

/** Throw to answer with an RFC 9457 problem response: `throw new HttpError(404, 'No such user')`. */
class HttpError extends Error {
  constructor(status, detail, { headers } = {}) {
    super(detail === undefined ? `HTTP ${status}` : detail);
    this.name = 'HttpError';
    this.status = status;
    this.detail = detail;
    this.headers = headers;
  }
}

function flatHeaders(headers) {
  const flat = [];
  if (!headers) return flat;
  const entries = typeof headers.entries === 'function' && !Array.isArray(headers) ? headers.entries() : Object.entries(headers);
  for (const [name, value] of entries) {
    if (Array.isArray(value)) for (const v of value) flat.push(String(name), String(v));
    else flat.push(String(name), String(value));
  }
  return flat;
}

/** `{type: 'object', properties, required}` → the core's parameter list. */
function paramsOf(schema, where) {
  if (!schema) return undefined;
  if (schema.type !== 'object' || typeof schema.properties !== 'object') {
    throw new TypeError(`ferrule: ${where} must be an object schema with properties`);
  }
  const required = new Set(schema.required || []);
  return Object.entries(schema.properties).map(([name, property]) => ({ name, schema: property, required: required.has(name) }));
}

/**
 * A route's options → the core's RouteSpec fields. `body` is a JSON body's schema, `form` a
 * url-encoded form's, `multipart` a multipart form's (fields with `format: 'binary'` are files);
 * `query`, `headers`, `cookies` are object schemas, `params` adds constraints to path
 * parameters (their types come from the template, `{id:int}`).
 */
function specOf(method, path, options) {
  const spec = { method, path };
  const query = paramsOf(options.query, `${method} ${path}: query`);
  if (query) spec.query = query;
  const headers = paramsOf(options.headers, `${method} ${path}: headers`);
  if (headers) spec.headers = headers;
  const cookies = paramsOf(options.cookies, `${method} ${path}: cookies`);
  if (cookies) spec.cookies = cookies;
  const params = paramsOf(options.params, `${method} ${path}: params`);
  if (params) spec.path_params = params.map(({ name, schema }) => ({ name, schema }));
  const bodies = ['body', 'form', 'multipart', 'text', 'bytes'].filter((k) => options[k] !== undefined);
  if (bodies.length > 1) throw new TypeError(`ferrule: ${method} ${path}: give one of body, form, multipart, text, bytes`);
  if (bodies.length === 1) {
    const kind = bodies[0] === 'body' ? 'json' : bodies[0];
    const schema = options[bodies[0]];
    spec.body = { kind, required: options.bodyRequired !== false };
    if (schema && typeof schema === 'object') spec.body.schema = schema;
    if (options.maxFileSize !== undefined) spec.body.max_file_size = options.maxFileSize;
  }
  if (options.cors !== undefined) spec.cors = options.cors;
  if (options.compression !== undefined) spec.compression = options.compression;
  if (options.bodyLimit !== undefined) spec.body_limit = options.bodyLimit;
  if (options.timeout !== undefined) spec.timeout_ms = options.timeout;
  return spec;
}

function appConfig(options) {
  const keys = {
    bodyLimit: 'body_limit',
    cors: 'cors',
    compression: 'compression',
    requestId: 'request_id',
    timeout: 'timeout_ms',
    maxHeaderBytes: 'max_header_bytes',
    shutdownTimeout: 'shutdown_timeout_ms',
    headerReadTimeout: 'header_read_timeout_ms',
    bodyReadTimeout: 'body_read_timeout_ms',
    minBodyRate: 'min_body_rate',
    keepAliveTimeout: 'keep_alive_timeout_ms',
    sendTimeout: 'send_timeout_ms',
    maxConnections: 'max_connections',
    maxQueuedRequests: 'max_queued_requests',
    http2MaxConcurrentStreams: 'http2_max_concurrent_streams',
    http2KeepAliveInterval: 'http2_keep_alive_interval_ms',
    maxJsonDepth: 'max_json_depth',
    maxMultipartParts: 'max_multipart_parts',
    maxPartHeaderBytes: 'max_part_header_bytes',
    maxFilenameBytes: 'max_filename_bytes',
  };
  const config = {};
  for (const [name, value] of Object.entries(options || {})) {
    if (!(name in keys)) throw new TypeError(`ferrule: unknown App option ${name} (${Object.keys(keys).join(', ')})`);
    if (value !== undefined) config[keys[name]] = value;
  }
  return config;
}

class App {
  /**
   * Options: bodyLimit (bytes, default 2 MiB), cors ({allow_origins, allow_methods,
   * allow_headers, expose_headers, allow_credentials, max_age_secs}), compression ({min_size,
   * gzip, br, zstd}), requestId (default true), timeout (ms → 504), maxHeaderBytes (→ 431),
   * shutdownTimeout (ms, default 10 s). Connection limits (defaults in the README's table):
   * headerReadTimeout, bodyReadTimeout, minBodyRate (bytes/s), keepAliveTimeout (ms), sendTimeout (ms),
   * maxConnections, maxQueuedRequests (→ 503), http2MaxConcurrentStreams,
   * http2KeepAliveInterval (ms); input limits: maxJsonDepth, maxMultipartParts,
   * maxPartHeaderBytes, maxFilenameBytes.
   */
  constructor(options = {}) {
    this._native = new native.NativeApp(JSON.stringify(appConfig(options)));
    this._handlers = [];
    this._closed = null;
    this._port = null;
  }

  /** `route(method, path, [options], handler)`; `route({ method, url, handler, ...options })` too. */
  route(method, path, options, handler) {
    if (typeof method === 'object' && method !== null) {
      const { method: m, url, path: p, handler: h, ...rest } = method;
      return this.route(m, url || p, rest, h);
    }
    if (typeof options === 'function') {
      handler = options;
      options = {};
    }
    if (typeof handler !== 'function') throw new TypeError(`ferrule: ${method} ${path}: the handler must be a function`);
    const methods = (Array.isArray(method) ? method : [method]).map((m) => String(m).toUpperCase());
    for (const m of methods) {
      if (!METHODS.includes(m)) throw new TypeError(`ferrule: ${m} is not a supported method (${METHODS.join(', ')})`);
      const index = this._native.addRoute(JSON.stringify(specOf(m, path, options || {})), options?.status ?? 200);
      this._handlers[index] = handler;
    }
    return this;
  }

  /**
   * Declares a route from an explicit core RouteSpec (`{ method, path, query: [{name, schema,
   * required}], headers, cookies, path_params, body: {kind, schema}, ... }`), for routes
   * described as data such as the shared fixture corpus.
   */
  addRoute(spec, handler, { status = 200 } = {}) {
    if (typeof handler !== 'function') throw new TypeError('ferrule: addRoute needs a handler function');
    const index = this._native.addRoute(JSON.stringify(spec), status);
    this._handlers[index] = handler;
    return this;
  }

  get(path, options, handler) { return this.route('GET', path, options, handler); }
  post(path, options, handler) { return this.route('POST', path, options, handler); }
  put(path, options, handler) { return this.route('PUT', path, options, handler); }
  patch(path, options, handler) { return this.route('PATCH', path, options, handler); }
  delete(path, options, handler) { return this.route('DELETE', path, options, handler); }
  head(path, options, handler) { return this.route('HEAD', path, options, handler); }
  options(path, options, handler) { return this.route('OPTIONS', path, options, handler); }

  /** The port being served, while listening. */
  get port() {
    return this._port;
  }

  /**
   * Serves until `close()` (or SIGINT/SIGTERM when `handleSignals`, the default). Resolves
   * with `{ host, port }` once listening. With `workers: N > 1` the primary process forks N
   * workers (node:cluster) that share the port, and resolves when they have all exited.
   */
  async listen({ host = '127.0.0.1', port = 8000, workers = 1, threads, handleSignals = true } = {}) {
    if (workers > 1 && cluster.isPrimary) return supervise(workers, handleSignals);
    const inWorker = cluster.isWorker;
    let signals = null;
    let stoppedBySignal = false;
    let resolveClosed;
    this._closed = new Promise((resolve) => { resolveClosed = resolve; });
    const native = this._native;
    const handlers = this._handlers;
    let flushQueued = false;
    const flushSoon = () => {
      if (flushQueued) return;
      flushQueued = true;
      queueMicrotask(() => { flushQueued = false; native.flush(); });
    };
    const run = (id, route, ctx) => {
      let result;
      try {
        result = handlers[route](ctx);
      } catch (error) {
        failWith(native, id, error, route, ctx);
        return;
      }
      if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
        result.then(
          (value) => { answer(native, id, value, ctx); flushSoon(); },
          (error) => { failWith(native, id, error, route, ctx); flushSoon(); },
        );
      } else {
        answer(native, id, result, ctx);
      }
    };
    const onJobs = () => {
      try {
        const batch = native.dispatch();
        if (batch === null) {
          // Stopped by a signal and the drain deadline cut requests off: one line was printed;
          // the exit status says so too. (A close() the program asked for leaves it its own.)
          if (stoppedBySignal && native.drainCutOff()) process.exitCode = 1;
          native.release();
          this._port = null;
          if (signals) for (const s of ['SIGINT', 'SIGTERM']) process.removeListener(s, signals);
          resolveClosed();
          return;
        }
        // [id, route, method, path, params, query, headers, cookies, body, requestId] per request.
        // Once synchronous handlers have kept this batch for a while, each further request is
        // checked before it starts: one whose deadline passed meanwhile is skipped (the client
        // already has its 504), so overruns do not pile up behind each other.
        const started = batch.length > 10 ? performance.now() : 0;
        for (let i = 0; i < batch.length; i += 10) {
          if (i > 0 && performance.now() - started > 5 && !native.wanted(batch[i])) continue;
          run(batch[i], batch[i + 1], new Context(native, batch, i));
        }
        native.flush();
      } catch (error) {
        console.error('ferrule: dispatching requests failed:', error);
      }
    };
    this._port = native.listen(onJobs, host, port, inWorker, threads);
    if (handleSignals) {
      // A cluster worker's IPC channel would keep it alive after closing: let go of it too.
      signals = () => { stoppedBySignal = true; this.close().then(() => { if (inWorker) cluster.worker.disconnect(); }); };
      process.once('SIGINT', signals);
      process.once('SIGTERM', signals);
    }
    return { host, port: this._port };
  }

  /** Stops accepting connections, lets in-flight requests finish; resolves when done. */
  async close() {
    if (!this._closed) return;
    this._native.close();
    await this._closed;
  }
}

const ID = Symbol('ferrule.id');
const NATIVE = Symbol('ferrule.native');
const SIGNAL = Symbol('ferrule.signal');

/**
 * What a handler receives (`Context` in index.d.ts). `signal` aborts at the request's deadline,
 * when the core answers 504: an async handler hands it to fetch, timers or streams and stops
 * its work. Made on first read only (one native call and a timer), so handlers that never
 * read it pay nothing; without a deadline it never aborts.
 */
class Context {
  constructor(native, batch, i) {
    this.method = batch[i + 2];
    this.path = batch[i + 3];
    this.params = batch[i + 4];
    this.query = batch[i + 5];
    this.headers = batch[i + 6];
    this.cookies = batch[i + 7];
    this.body = batch[i + 8];
    this.requestId = batch[i + 9];
    this[ID] = batch[i];
    this[NATIVE] = native;
    this[SIGNAL] = undefined;
  }

  get signal() {
    if (this[SIGNAL] === undefined) {
      const ms = this[NATIVE].remainingMs(this[ID]);
      this[SIGNAL] = ms === null ? new AbortController().signal : AbortSignal.timeout(Math.ceil(ms));
    }
    return this[SIGNAL];
  }
}

function answer(native, id, value, ctx) {
  try {
    if (value instanceof Response) {
      const headers = flatHeaders(value.headers);
      if (value.type) headers.push('content-type', String(value.type));
      native.replyResponse(id, statusOf(value.status), headers, value.body === undefined ? null : value.body);
    } else {
      native.reply(id, value === undefined ? null : value);
    }
  } catch (error) {
    // Unanswered, the request would wait for its timeout; thrown from a Promise callback,
    // this would be an unhandled rejection, which ends the process.
    console.error(`ferrule: ${ctx.method} ${ctx.path}: the handler's result cannot be sent:`, error);
    native.fail(id, 500, null, [], 'returned a value that cannot be sent');
  }
}

/**
 * The native side takes a status as a number only; anything else becomes 0, which it refuses
 * as it refuses any number that is not an HTTP status (a bare 500).
 */
function statusOf(status) {
  return typeof status === 'number' && status >= 0 ? status : 0;
}

function failWith(native, id, error, route, ctx) {
  if (error instanceof HttpError) {
    let headers = [];
    try {
      headers = flatHeaders(error.headers);
    } catch (_) {
      // Headers that cannot be read are left out; the status and detail still go out.
    }
    native.fail(id, statusOf(error.status), error.detail === undefined ? null : String(error.detail), headers, null);
    return;
  }
  // The server's log gets the stack; the client gets a bare 500.
  console.error(`ferrule: ${ctx.method} ${ctx.path}: the handler threw:`, error);
  native.fail(id, 500, null, [], error && error.name ? `${error.name} thrown` : 'a non-Error value thrown');
}

/** The primary process of `listen({ workers })`: forks, forwards signals, waits. */
function supervise(workers, handleSignals) {
  return new Promise((resolve) => {
    let stopping = false;
    for (let i = 0; i < workers; i++) cluster.fork();
    const stop = () => {
      stopping = true;
      for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM');
    };
    if (handleSignals) {
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    }
    cluster.on('exit', (worker, code, signal) => {
      if (!stopping) {
        console.error(`ferrule: worker ${worker.process.pid} exited (${signal || code}); starting another`);
        setTimeout(() => cluster.fork(), 1000);
        return;
      }
      if (Object.keys(cluster.workers).length === 0) {
        process.removeListener('SIGINT', stop);
        process.removeListener('SIGTERM', stop);
        resolve({ workers });
      }
    });
  });
}

module.exports = {
  App,
  Response,
  HttpError,
  version: native.version,
  problemJson: native.problemJson,
};
