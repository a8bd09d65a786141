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
const { AsyncResource } = require('node:async_hooks');
const cluster = require('node:cluster');
const native = require('./ferrule.node');
// An event object's fields, as the core names them (EVENT_FIELDS in core/src/stream/event.rs).
const EVENT_FIELDS = new Set(native.eventFields());
const unknownEventField = native.unknownEventField;
const { WebSocket, Sockets } = require('./websocket.js');
const { PHASE_OF, NOT_OFFERED, NOT_FOUND, DONE_CONTEXT, Reply, SentFile, callHook, callHookNow, isThenable, takeDoneContext } = require('./hooks.js');

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
/** Hooks of the app's life, not of a request: JavaScript runs them, in lists kept by the root app. */
const LIFECYCLE_HOOKS = ['onReady', 'onListen', 'preClose', 'onClose'];
/** The descriptor a worker process finds the primary's listening socket on (see supervise). */
const INHERITED_FD = 4;

/**
 * Calls into the native module, turning its `KIND|message` errors into the error a Node
 * programmer expects: a TypeError or RangeError for a mistake in the program, an Error with Node's `code`
 * (`EADDRINUSE`, …) for a socket the machine refuses.
 */
function nativeCall(call) {
  try {
    return call();
  } catch (error) {
    const match = /^([A-Za-z]+)\|([\s\S]*)$/.exec(error && error.message);
    if (!match) throw error;
    const [, kind, message] = match;
    if (kind === 'TypeError') throw new TypeError(message);
    if (kind === 'RangeError') throw new RangeError(message);
    const rethrown = new Error(message);
    if (kind !== 'Error') rethrown.code = kind;
    throw rethrown;
  }
}

/** An explicit response: `new Response(body, { status, headers, type })`. */
class Response {
  constructor(body = null, { status = 200, headers = {}, type } = {}) {
    this.body = body;
    this.status = status;
    this.headers = headers;
    this.type = type;
  }

  /**
   * The Fetch API's `Response.json(data, { status, headers })`, which a program that imports
   * this class in place of the global one still writes: `data` as JSON, an object or array
   * written (and filtered by the route's response schema) as a plain result is, anything else
   * as its `JSON.stringify` text.
   */
  static json(data, { status = 200, headers = {} } = {}) {
    if (data !== null && typeof data === 'object') return new Response(data, { status, headers });
    const text = JSON.stringify(data);
    if (text === undefined) throw new TypeError(`ferrule: Response.json() cannot write ${typeof data} as JSON`);
    return new Response(text, { status, headers, type: 'application/json; charset=utf-8' });
  }
}

/**
 * A stream of Server-Sent Events: `return sse(events())`, where `events` is an async (or sync)
 * generator of `{ data, event, id, retry, comment }` objects or plain data (a string as it is,
 * anything else as JSON). The core frames them, keeps a quiet stream alive and ends it at
 * shutdown; read `ctx.header('last-event-id')` to resume after a reconnect.
 */
class EventStream {
  constructor(source, { status, headers = {}, keepAlive } = {}) {
    if (keepAlive !== undefined && !(typeof keepAlive === 'number' && keepAlive >= 0 && Number.isFinite(keepAlive))) {
      throw new TypeError(`ferrule: sse() keepAlive is milliseconds, 0 or more (0: none), not ${keepAlive}`);
    }
    // An Array (or any other iterable) of events is sent as they are, one after another.
    if (source !== null && typeof source === 'object' && iteratorOf(source) === null && typeof source[Symbol.iterator] === 'function') source = source[Symbol.iterator]();
    if (iteratorOf(source) === null) throw new TypeError('ferrule: sse() takes an iterable, an async iterable or a stream');
    this.source = source;
    this.status = status ?? 200;
    // Without a status of its own, it answers with the one `reply.code()` set.
    this.statusGiven = status !== undefined;
    this.headers = headers;
    // Its own keep-alive period (ms), in place of the app's sseKeepAlive.
    this.keepAlive = keepAlive;
  }
}

function sse(source, options) {
  return new EventStream(source, options);
}

/**
 * What a streamed result is iterated with: a Readable or a Web ReadableStream (both async
 * iterable), an async iterator or generator, or a sync generator; null for anything else.
 */
function iteratorOf(value) {
  if (value === null || typeof value !== 'object') return null;
  if (typeof value[Symbol.asyncIterator] === 'function') return value[Symbol.asyncIterator]();
  if (typeof value.getReader === 'function') return readerIterator(value.getReader());
  if (typeof value.next === 'function' && typeof value[Symbol.iterator] === 'function') return value;
  return null;
}

/** A Web ReadableStream without async iteration, read through its reader. */
function readerIterator(reader) {
  return {
    next: () => reader.read(),
    return: () => reader.cancel().then(() => ({ done: true, value: undefined })),
  };
}

/** Throw to answer with an RFC 9457 problem response: `throw new HttpError(404, 'No such user')`. */
class HttpError extends Error {
  constructor(status, detail, { headers } = {}) {
    super(detail === undefined ? `HTTP ${status}` : detail);
    this.name = 'HttpError';
    this.status = status;
    /** Fastify's name for it, which error handlers read. */
    this.statusCode = status;
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

/** What a route says about itself in the OpenAPI document (@fastify/swagger's names). */
const DOC_OPTIONS = ['summary', 'description', 'tags', 'operationId', 'deprecated', 'hide', 'security'];
/** Hooks a route declares among its options, as Fastify's (`{ preHandler: [auth] }`). */
const ROUTE_HOOKS = [...Object.keys(PHASE_OF), ...Object.keys(NOT_OFFERED)];
const ROUTE_OPTIONS = ['query', 'headers', 'cookies', 'params', 'body', 'form', 'multipart', 'text', 'bytes',
  'bodyRequired', 'maxFileSize', 'cors', 'compression', 'bodyLimit', 'timeout', 'status', 'response', 'schema', 'config',
  ...DOC_OPTIONS, ...ROUTE_HOOKS];
const FASTIFY_SCHEMA_PARTS = {
  body: 'body', querystring: 'query', query: 'query', params: 'params', headers: 'headers', response: 'response',
  ...Object.fromEntries(DOC_OPTIONS.map((name) => [name, name])),
};
const SOCKET_OPTIONS = ['query', 'headers', 'cookies', 'params', 'cors', 'schema', 'config', 'subprotocols', 'maxMessageBytes', ...ROUTE_HOOKS];

/**
 * Fastify's `request.routeOptions` for a route declared with `options`: its `method`, `url` (the
 * path as declared), `config` (the route's own, `{}` when none: what a hook reads to tell a
 * public route, `routeOptions.config.public`) and `schema` (as given, or made of the options:
 * `routeOptions.schema.security`).
 */
function routeOptionsOf(method, url, options) {
  const config = options.config ?? {};
  if (config === null || typeof config !== 'object') throw new TypeError(`ferrule: ${method} ${url}: config must be an object`);
  let schema = options.schema;
  if (schema === undefined) {
    schema = {};
    for (const [part, option] of Object.entries(FASTIFY_SCHEMA_PARTS)) {
      if (part !== 'query' && options[option] !== undefined) schema[part] = options[option];
    }
  }
  return Object.freeze({ method, url, config: Object.freeze({ ...config }), schema });
}
/**
 * What `inject()` without options returns, as light-my-request's chain: a method and URL
 * (`.get(url)`, `.post(url)`, …), then `.headers()`, `.query()`, `.cookies()`, `.payload()` or
 * `.body()`, and `.end(callback)` or `await` to send it (once).
 */
class InjectChain {
  constructor(app) {
    this._app = app;
    this._options = { method: 'GET', url: '/' };
    this._sent = null;
  }

  _set(name, value) {
    if (this._sent) throw new Error('ferrule: inject(): the request was already sent');
    this._options[name] = value;
    return this;
  }

  headers(headers) { return this._set('headers', { ...this._options.headers, ...headers }); }
  query(query) { return this._set('query', query); }
  cookies(cookies) { return this._set('cookies', cookies); }
  payload(payload) { return this._set('payload', payload); }
  body(body) { return this._set('payload', body); }

  _send() {
    if (!this._sent) this._sent = this._app._inject(this._options);
    return this._sent;
  }

  end(callback) {
    const sent = this._send();
    if (typeof callback !== 'function') return sent;
    sent.then((response) => callback(null, response), (error) => callback(error));
    return undefined;
  }

  then(resolve, reject) { return this._send().then(resolve, reject); }
  catch(reject) { return this._send().catch(reject); }
}
for (const method of ['delete', 'get', 'head', 'options', 'patch', 'post', 'put', 'trace']) {
  InjectChain.prototype[method] = function chained(url) {
    this._set('method', method.toUpperCase());
    return this._set('url', url);
  };
}

/** Fastify's accessor decoration: `{ getter, setter }` with a function for either. */
function isAccessor(value) {
  return value !== null && typeof value === 'object' && (typeof value.getter === 'function' || typeof value.setter === 'function');
}

/** `routeOptions` of a request no route took (see `Context#routeOptions`). */
const NO_CONFIG = Object.freeze({});
function unroutedOptions(method) {
  return Object.freeze({ method, url: undefined, config: NO_CONFIG, schema: undefined });
}

const LISTEN_OPTIONS = ['host', 'port', 'workers', 'threads', 'handleSignals', 'log'];

/** Refuses an option not in `known`, naming the nearest one (the core's rule). */
function checkOptions(options, known, what) {
  for (const name of Object.keys(options)) {
    if (!known.includes(name)) throw new TypeError(`ferrule: ${native.unknownOption(what, name, known)}`);
  }
}

/** `{type: 'object', properties, required}` → the core's parameter list. */
function paramsOf(schema, where) {
  if (!schema) return undefined;
  if (schema.type !== 'object' || typeof schema.properties !== 'object') {
    throw new TypeError(`ferrule: ${where} must be an object schema with properties`);
  }
  const required = new Set(schema.required || []);
  return Object.entries(schema.properties).map(([name, property]) => {
    // OpenAPI's `style` and `explode` of an array parameter ride along in its property.
    const { style, explode, ...rest } = property || {};
    const param = { name, schema: rest, required: required.has(name) };
    if (style !== undefined) param.style = style;
    if (explode !== undefined) param.explode = explode;
    return param;
  });
}

/**
 * A route's options → the core's RouteSpec fields. `body` is a JSON body's schema, `form` a
 * url-encoded form's, `multipart` a multipart form's (fields with `format: 'binary'` are files);
 * `query`, `headers`, `cookies` are object schemas, `params` adds constraints to path
 * parameters (their types come from the template, `{id:int}`).
 */
function specOf(method, path, options) {
  checkOptions(options, ROUTE_OPTIONS, `route option for ${method} ${path}:`);
  if (options.schema !== undefined) {
    // Fastify's shape, `{ schema: { body, querystring, params, headers } }`, is the same schemas.
    const { schema, ...rest } = options;
    checkOptions(schema, Object.keys(FASTIFY_SCHEMA_PARTS), `schema part for ${method} ${path}:`);
    options = { ...rest };
    for (const [part, option] of Object.entries(FASTIFY_SCHEMA_PARTS)) {
      if (schema[part] === undefined) continue;
      if (options[option] !== undefined) throw new TypeError(`ferrule: ${method} ${path}: ${option} is given twice (as an option and in schema)`);
      options[option] = schema[part];
    }
  }
  // A uuid, date or date-time parameter reaches the handler as its client sent it, as
  // Fastify hands it over (it was the core's rewriting: `Z` as `+00:00`, a uuid lowered).
  const spec = { method, path, formats_as_sent: true };
  const query = paramsOf(options.query, `${method} ${path}: query`);
  if (query) {
    spec.query = query;
    // Fastify keeps what its querystring schema does not declare, as sent, unless the schema
    // says `additionalProperties: false` (Ajv's `removeAdditional` then drops it).
    if (options.query.additionalProperties !== false) spec.keep_undeclared_query = true;
  }
  const headers = paramsOf(options.headers, `${method} ${path}: headers`);
  if (headers) spec.headers = headers;
  const cookies = paramsOf(options.cookies, `${method} ${path}: cookies`);
  if (cookies) spec.cookies = cookies;
  // What each object schema says of its parameters as one object (`anyOf` of `required`s,
  // `minProperties`, draft-07's `dependencies`, …): the core keeps those keywords and judges
  // them once each parameter passed its own schema (they were dropped: found beside Fastify 5).
  for (const [option, source] of [['query', 'query'], ['headers', 'header'], ['cookies', 'cookie']]) {
    if (options[option] !== null && typeof options[option] === 'object') (spec.object_rules ??= {})[source] = options[option];
  }
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
  if (options.cors !== undefined) spec.cors = corsOf(options.cors);
  if (options.compression !== undefined) spec.compression = options.compression;
  if (options.bodyLimit !== undefined) spec.body_limit = options.bodyLimit;
  if (options.timeout !== undefined) spec.timeout_ms = options.timeout;
  if (options.summary !== undefined) spec.summary = options.summary;
  if (options.description !== undefined) spec.description = options.description;
  if (options.tags !== undefined) spec.tags = options.tags;
  if (options.operationId !== undefined) spec.operation_id = options.operationId;
  if (options.deprecated !== undefined) spec.deprecated = options.deprecated;
  if (options.hide !== undefined) spec.include_in_schema = !options.hide;
  if (options.security !== undefined) spec.security = options.security;
  if (options.response !== undefined) spec.responses = responsesOf(options.response, `${method} ${path}`);
  return spec;
}

/**
 * Fastify's `response: { 200: schema, '4xx': schema, default: schema }` → the core's
 * declared responses. A JSON result sent with a status is written with only what its schema
 * declares (the core's shape, as fast-json-stringify drops undeclared properties). A schema's
 * `description` (or an OpenAPI-style `{ description, content: { 'application/json': { schema } } }`)
 * describes the response in the OpenAPI document.
 */
function responsesOf(response, where) {
  if (response === null || typeof response !== 'object' || Array.isArray(response)) {
    throw new TypeError(`ferrule: ${where}: response must map statuses to schemas ({ 200: schema })`);
  }
  const responses = {};
  for (const [status, declared] of Object.entries(response)) {
    if (declared === null || typeof declared !== 'object') {
      throw new TypeError(`ferrule: ${where}: response ${status} must be a schema object`);
    }
    const json = declared.content && declared.content['application/json'];
    const schema = json ? json.schema || {} : declared;
    const entry = { schema };
    if (typeof declared.description === 'string') entry.description = declared.description;
    responses[String(status)] = entry;
  }
  return responses;
}

/**
 * App options are the core's settings in Node's spelling, derived from the core's own list so
 * a new setting reaches Node without an edit here: camelCase, and a duration's `_ms` left off
 * (`shutdown_timeout_ms` → `shutdownTimeout`, in milliseconds as everywhere in Node).
 */
const APP_OPTIONS = Object.fromEntries(
  native.appSettingNames().map((core) => [core.replace(/_ms$/, '').replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase()), core]),
);

/** The options by the core's names (the route options `specOf` renames, and every app option). */
const NODE_NAMES = {
  ...Object.fromEntries(Object.entries(APP_OPTIONS).map(([node, core]) => [core, node])),
  trusted_proxies: 'trustProxy', timeout_ms: 'timeout', operation_id: 'operationId', include_in_schema: 'hide', max_file_size: 'maxFileSize', path_params: 'params',
};

/**
 * `nativeCall` for a call that hands the core options: the core names a value it refuses by
 * its own spelling (`app settings: body_limit: …`, `GET /a: timeout_ms: …`), which a Node
 * program never wrote; the error names it as written (`bodyLimit`, `timeout`).
 */
function withNodeNames(call) {
  try {
    return nativeCall(call);
  } catch (error) {
    const named = /^(ferrule: (?:app settings|[A-Z]+ \S+): )([a-z0-9_]+)(?=[.:[ ])/.exec(error.message);
    if (named) error.message = `${named[1]}${NODE_NAMES[named[2]] ?? named[2]}${error.message.slice(named[0].length)}`;
    throw error;
  }
}

function appConfig(options) {
  const keys = APP_OPTIONS;
  const config = {};
  for (const [name, value] of Object.entries(options || {})) {
    if (name === 'trustProxy') {
      if (value !== undefined) config.trusted_proxies = trustedProxiesOf(value);
      continue;
    }
    if (!Object.hasOwn(keys, name)) checkOptions({ [name]: value }, [...Object.keys(keys), 'logger', 'onProtoPoisoning', 'return503OnClosing', 'trustProxy'], 'App option');
    if (value !== undefined) config[keys[name]] = name === 'cors' ? corsOf(value) : value;
  }
  return config;
}

/**
 * Fastify's `trustProxy` as the core's `trusted_proxies`: `true` (every peer), `false`, or the
 * proxies as a list or a comma-separated string of addresses, networks (`10.0.0.0/8`) and
 * proxy-addr's names (`loopback`, `linklocal`, `uniquelocal`). A hop count or a function is
 * refused: the core decides whom it believes once per connection, without calling JavaScript.
 */
function trustedProxiesOf(value) {
  if (value === true) return ['*'];
  if (value === false) return [];
  // The core splits a comma-separated list.
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return [...value];
  const what = typeof value === 'number' ? 'a hop count' : typeof value === 'function' ? 'a function' : `${typeof value} ${String(value)}`;
  throw new TypeError(`ferrule: trustProxy as ${what} is not offered; give true, or the proxies' addresses ('127.0.0.1', '10.0.0.0/8', ['loopback'])`);
}

const FASTIFY_CORS = ['origin', 'methods', 'allowedHeaders', 'exposedHeaders', 'credentials', 'maxAge', 'optionsSuccessStatus'];

/**
 * A `cors` option: the core's own shape (`{ allow_origins, … }`) as it is, or @fastify/cors's
 * (`true`, `{ origin, methods, allowedHeaders, exposedHeaders, credentials, maxAge,
 * optionsSuccessStatus }`) with its defaults: any origin, its six methods, the headers a preflight
 * asks for, and a preflight answered 204.
 */
function corsOf(value) {
  if (value === true) value = {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  // The core's names all have an underscore (`allow_origins`): a shape of only such names is
  // the core's, which names a misspelling among its own; any other name is taken as
  // @fastify/cors's, so `orign` is named against `origin` and the rest (found by a README
  // probe: it was refused with the core's list).
  const keys = Object.keys(value);
  if (keys.length > 0 && keys.every((key) => key.includes('_'))) return value;
  checkOptions(value, FASTIFY_CORS, 'cors option');
  const list = (given) => (typeof given === 'string' ? given.split(',').map((item) => item.trim()).filter(Boolean) : [...given]);
  const { origin = '*', methods = 'GET,HEAD,PUT,PATCH,POST,DELETE', allowedHeaders = '*', exposedHeaders, credentials = false, maxAge, optionsSuccessStatus = 204 } = value;
  if (typeof origin === 'function') {
    throw new TypeError('ferrule: cors origin as a function is not offered (the core answers CORS without calling JavaScript); list the origins, or give RegExps');
  }
  // @fastify/cors takes RegExps among the origins and `test`s each (a search, not a whole
  // match); the core matches its one expression whole, so each becomes `.*(?:source).*`.
  const given = origin === true ? ['*'] : origin === false ? [] : origin instanceof RegExp ? [origin] : list(origin);
  const patterns = given.filter((item) => item instanceof RegExp).map(searchedBy);
  const config = {
    allow_origins: given.filter((item) => !(item instanceof RegExp)),
    allow_methods: list(methods),
    allow_headers: list(allowedHeaders),
    allow_credentials: Boolean(credentials),
    preflight_status: optionsSuccessStatus,
  };
  if (patterns.length > 0) config.allow_origin_regex = patterns.join('|');
  if (exposedHeaders !== undefined) config.expose_headers = list(exposedHeaders);
  if (maxAge !== undefined) config.max_age_secs = maxAge;
  return config;
}

/** A RegExp as the core's whole-match expression that `regex.test(origin)` would pass:
 * `/\.example\.com$/i` → `(?i:.*(?:\.example\.com$).*)`. Syntax the core's engine lacks
 * (look-behind, back-references) is refused when the app is made, naming the expression. */
function searchedBy(regex) {
  const flags = [...regex.flags].filter((flag) => 'ims'.includes(flag)).join('');
  return `(?${flags ? `${flags}:` : ':'}.*(?:${regex.source}).*)`;
}

/** Marks Ferrule's stand-ins for @fastify/cors and @fastify/compress: `register` takes them as
 * the app's `cors` or `compression` setting (the core does the work) instead of running them. */
const CORE_PLUGIN = Symbol('ferrule.corePlugin');

/**
 * `app.register(cors, options)` as with @fastify/cors (its options and defaults, as the `cors`
 * setting takes them): CORS for every route, answered by the core. Global, as @fastify/cors is.
 */
function cors() {
  throw new Error('ferrule: cors is registered, not called: app.register(cors, options)');
}
cors[CORE_PLUGIN] = 'cors';
cors.settingsOf = (options) => corsOf(options);

const FASTIFY_COMPRESS = ['global', 'threshold', 'encodings', 'zlibOptions'];

/**
 * `app.register(compress, options)` as with @fastify/compress: responses of at least
 * `threshold` bytes (default 1024) compressed with the first of `encodings` the client accepts
 * that the core has (br, gzip, zstd; deflate is left to the identity), at `zlibOptions.level`.
 * Streams are sent as they are made, never held back to be compressed.
 */
function compress() {
  throw new Error('ferrule: compress is registered, not called: app.register(compress, options)');
}
compress[CORE_PLUGIN] = 'compression';
compress.settingsOf = (options) => {
  checkOptions(options, FASTIFY_COMPRESS, 'compress option');
  const { global = true, threshold = 1024, encodings = ['br', 'gzip', 'zstd'], zlibOptions = {} } = options;
  if (global !== true) throw new TypeError('ferrule: compress with global: false is not offered; give the routes that compress a compression option');
  checkOptions(zlibOptions, ['level'], 'compress zlibOptions option');
  const config = { enabled: true, min_size: threshold, gzip: encodings.includes('gzip'), br: encodings.includes('br'), zstd: encodings.includes('zstd') };
  if (zlibOptions.level !== undefined) config.level = zlibOptions.level;
  return config;
};

const LOG_METHODS = ['error', 'warn', 'info'];
/** `logger: false`: what the JavaScript side would log (a handler's error) goes nowhere, as the
 * core's records do (`logLevel: 'off'`). */
const SILENT = Object.freeze({ error() {}, warn() {}, info() {}, debug() {} });

/**
 * The `logger` option: `true` or left out, the core writes `ferrule: …` lines to stderr itself;
 * `false`, nothing is logged (`logLevel: 'off'`); a pino-compatible logger (pino, a Fastify
 * `app.log`, anything with `error`, `warn`, `info` and optionally `debug` methods taking
 * `(fields, message)`), the core's records are handed to it.
 */
function loggerOf(logger) {
  if (logger === false) return SILENT;
  if (logger === undefined || logger === true) return null;
  if (logger !== null && typeof logger === 'object' && LOG_METHODS.every((m) => typeof logger[m] === 'function')) return logger;
  throw new TypeError('ferrule: logger must be true, false or a pino-compatible logger (an object with error, warn and info methods)');
}

/**
 * An `onClose` hook, as Fastify calls one: `(instance, done)`, or `(instance)` whose Promise
 * (if it returns one) is waited for.
 */
function callOnClose(hook, app) {
  if (hook.length >= 2) return callHook(hook, [app]);
  return hook(app);
}

/** `path` as declared in a scope under `prefix`, as Fastify's `routeOptions.url` names it. */
/**
 * `fn` with `this` the app or scope it was declared on, as Fastify calls handlers and hooks
 * (`async function () { return this.db.query() }` after `decorate('db', …)`). An arrow function
 * has no `this` of its own and is kept as it is: a bound one cost 9–11 ns more per call from
 * the handler table (20M calls, one pinned core), for nothing. The length stays the same, so
 * `(request, reply)` and `done` are still told apart.
 */
function withScope(fn, scope) {
  return ARROW.test(Function.prototype.toString.call(fn)) ? fn : fn.bind(scope);
}

const ARROW = /^(async\s*)?(\([^)]*\)|[\w$]+)\s*=>/;

function urlOf(host, port) {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * What `await listen()` resolves to: `{ host, port }`, which reads as its URL where a string is
 * wanted (`` `listening at ${address}` ``), as Fastify's listen() resolves to the URL (found by
 * a Fastify port: it printed `[object Object]`).
 */
function listening(host, port) {
  const url = urlOf(host, port);
  return Object.defineProperties({ host, port }, {
    url: { value: url, enumerable: false },
    toString: { value: () => url, enumerable: false },
    [Symbol.toPrimitive]: { value: () => url, enumerable: false },
  });
}

function underPrefix(prefix, path) {
  if (!prefix) return path;
  return path === '' ? prefix : `${prefix}${path}`;
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

/**
 * What `app.log` and `request.log` are: pino's six levels and `child()`, handed to the app's
 * logger (a level it lacks goes to the nearest it has); without one (`logger: true`), warnings
 * and errors are `ferrule:` lines on stderr, as the core's own, and the rest is quiet.
 */
function logFacade(logger) {
  const facade = { child: () => facade };
  for (const level of LEVELS) {
    if (logger === null) {
      facade[level] = level === 'fatal' || level === 'error' || level === 'warn'
        ? (first, second) => console.error(`ferrule: ${typeof first === 'string' ? first : second ?? JSON.stringify(first)}`)
        : () => {};
    } else {
      const method = typeof logger[level] === 'function' ? level : level === 'fatal' ? 'error' : level === 'trace' ? 'debug' : level;
      facade[level] = typeof logger[method] === 'function' ? (...args) => logger[method](...args) : () => {};
    }
  }
  return facade;
}

/** One core record to the logger: `logger[level]({ target, ...fields }, message)`. */
function emitLog(logger, level, target, message, fields) {
  const method = typeof logger[level] === 'function' ? level : 'info';
  try {
    logger[method]({ target, ...fields }, message);
  } catch (error) {
    console.error('ferrule: the logger threw:', error);
  }
}

class App {
  /**
   * Options: bodyLimit (bytes, default 2 MiB), cors (@fastify/cors's options, or {allow_origins, allow_methods,
   * allow_headers, expose_headers, allow_credentials, max_age_secs}), compression ({min_size,
   * gzip, br, zstd}), requestId (default true), timeout (ms → 504), maxHeaderBytes (→ 431),
   * shutdownTimeout (ms, default 10 s). Connection limits (defaults in the README's table):
   * headerReadTimeout, bodyReadTimeout, minBodyRate (bytes/s), keepAliveTimeout (ms), sendTimeout (ms),
   * maxConnections, maxQueuedRequests (→ 503), http2MaxConcurrentStreams,
   * http2KeepAliveInterval (ms), sseKeepAlive (ms); input limits: maxJsonDepth, maxMultipartParts,
   * maxPartHeaderBytes, maxFilenameBytes, refusePrototypeKeys (default true; Fastify's
   * onProtoPoisoning: 'error' or 'ignore'); redirectSlashes (307 to the path's twin with the
   * trailing slash added or taken away when only that is routed; default false);
   * return503OnClosing (default true, as Fastify's: while close() runs its preClose hooks and
   * drains, new requests are answered 503 with `connection: close`; false serves them). Logging: accessLog (a record per request), logLevel
   * ('debug', 'info' (default), 'warn', 'error', 'off'), logger (see loggerOf). OpenAPI: title,
   * version, description, servers, openapiTags, openapiUrl ('/openapi.json'), docsUrl ('/docs',
   * Swagger UI); null switches the document or the page off.
   */
  constructor(options = {}) {
    const { logger, onProtoPoisoning, return503OnClosing = true, ...settings } = options || {};
    this._logger = loggerOf(logger);
    if (typeof return503OnClosing !== 'boolean') {
      throw new TypeError(`ferrule: return503OnClosing is true or false, not ${JSON.stringify(return503OnClosing)}`);
    }
    this._return503OnClosing = return503OnClosing;
    // Fastify's default: a body that could change an object's prototype is refused.
    if (onProtoPoisoning !== undefined && onProtoPoisoning !== 'error' && onProtoPoisoning !== 'ignore') {
      throw new TypeError(`ferrule: onProtoPoisoning is 'error' or 'ignore', not ${JSON.stringify(onProtoPoisoning)}`);
    }
    if (settings.refusePrototypeKeys === undefined) settings.refusePrototypeKeys = onProtoPoisoning !== 'ignore';
    this._refusePrototypeKeys = Boolean(settings.refusePrototypeKeys);
    if (logger === false && settings.logLevel === undefined) settings.logLevel = 'off';
    const config = appConfig(settings);
    this._native = withNodeNames(() => new native.NativeApp(JSON.stringify(config)));
    /** Whether any proxy is trusted (`trustProxy`): without one, `ctx.host` and `ctx.protocol` ask the core nothing. */
    this._trustsProxies = (config.trusted_proxies?.length ?? 0) > 0;
    /** The core's settings given here, which `register(cors)` and `register(compress)` do not replace. */
    this._settingsGiven = new Set(Object.keys(config));
    // dispatch, reply, replyTape, flush and serialise: the calls made per request or batch, as
    // plain functions (a method through napi-rs costs several times the call itself).
    Object.assign(this._native, this._native.hotPath());
    this._handlers = [];
    /** By route: whether its handler takes Fastify's `reply` (decided once: `Dispatcher.run`). */
    this._takesReply = [];
    /** By route: whether its path ends in Fastify's `*`, read as `params['*']` (`starParams`). */
    this._starred = [];
    /** By route: whether it is a WebSocket route (its handler takes the socket, once open). */
    this._isSocket = [];
    /** By route: what its spec declares (`DECLARES_QUERY`, `DECLARES_BODY`), which `Context` reads. */
    this._declares = [];
    /** By route keeping undeclared query parameters: the declared names (`declaredQuery` keeps only those). */
    this._queryNames = [];
    /** By route: Fastify's `request.routeOptions` (`{ method, url }`, the path as declared). */
    this._routeOptions = [];
    /** Each route's status for plain results, by its index. */
    this._statuses = [];
    /** Hook functions by the slot the core knows them as: `{ fn, kind }`. */
    this._hookFns = [];
    /** What a `register` scope shares with its app: its own fields would stay its own. */
    this._root = this;
    this._group = 0;
    /** `addContentTypeParser`'s parsers, app-wide: `{ type, parseAs, bodyLimit, fn }`. */
    this._parsers = [];
    /** `onRoute` hooks declared on this app or scope (see `_routeThroughHooks`). */
    this._onRoute = [];
    /** `onRegister` hooks declared here: called with each plugin scope made under it. */
    this._onRegister = [];
    this._parentScope = null;
    /** By route: the app or scope that declared it (whose request and reply decorations its requests get). */
    this._routeScopes = [];
    this._Context = class extends Context {};
    /** This app's replies: `decorateReply` adds to its prototype, not to every app's. */
    this._Reply = class extends Reply {};
    this._Context.prototype[DECLARES] = this._declares;
    this._Context.prototype[QUERY_NAMES] = this._queryNames;
    this._Context.prototype[ROUTE_OPTIONS_OF] = this._routeOptions;
    this._Context.prototype[APP] = this;
    this._pending = [];
    /** Every plugin's Promise, in order, never taken (what `register` waits for: `registration`). */
    this._loadLog = [];
    this._lifecycle = { onReady: [], onListen: [], preClose: [], onClose: [], ready: null };
    /** The close() under way: a signal's and the program's are one, so each hook runs once. */
    this._closing = null;
    this._dispatcher = null;
    this._onLocalJobs = null;
    this._closed = null;
    this._port = null;
  }

  /** `route(method, path, [options], handler)`; `route({ method, url, handler, ...options })` too. */
  route(method, path, options, handler) {
    // Fastify's object form; an Array is a list of methods (`route(['GET', 'POST'], …)`).
    if (typeof method === 'object' && method !== null && !Array.isArray(method)) {
      const { method: m, url, path: p, handler: h, ...rest } = method;
      return this.route(m, url || p, rest, h);
    }
    if (typeof options === 'function') {
      handler = options;
      options = {};
    }
    // Fastify's `get(path, { schema, handler })`.
    if (handler === undefined && options !== null && typeof options === 'object' && typeof options.handler === 'function') {
      ({ handler, ...options } = options);
    }
    if (typeof handler !== 'function') throw new TypeError(`ferrule: ${method} ${path}: the handler must be a function`);
    this._notListening(`${method} ${path}`);
    // Fastify's `/files/*`: the rest of the path, `params['*']` (found by a probe: refused).
    const declaredPath = path;
    const starred = typeof path === 'string' && path.endsWith('/*');
    if (starred) path = `${path.slice(0, -1)}{${STAR_PARAM}:path}`;
    const hooks = this._onRouteHooks();
    if (hooks.length > 0) {
      ({ method, options, handler } = this._routeThroughHooks(hooks, method, path, options || {}, handler));
      // A plugin's own route options (@fastify/helmet's `helmet`) are its onRoute hook's to
      // read: with one declared, what no ferrule option names is left to it, as Fastify does.
      options = Object.fromEntries(Object.entries(options).filter(([name]) => ROUTE_OPTIONS.includes(name)));
    }
    const methods = (Array.isArray(method) ? method : [method]).map((m) => String(m).toUpperCase());
    for (const m of methods) {
      if (!METHODS.includes(m)) throw new TypeError(`ferrule: ${m} is not a supported method (${METHODS.join(', ')})`);
    }
    // find-my-way's optional last parameter, `/posts/:id?`: the route with it and without it
    // (`/posts`), as find-my-way registers them.
    const optional = typeof path === 'string' ? /^(.*)\/:([A-Za-z0-9_]+)\?$/.exec(path) : null;
    const paths = optional ? [optional[1] || '/', `${optional[1]}/:${optional[2]}`] : [path];
    const declaredFor = paths.flatMap((p) => methods.map((m) => [m, specOf(m, p, options || {})]));
    const group = this._routeGroup(options || {}, `${methods.join(', ')} ${path}`);
    for (const [m, declared] of declaredFor) {
      const status = options?.status ?? 200;
      if (typeof status !== 'number') throw new TypeError(`ferrule: ${m} ${path}: status must be a number, not ${JSON.stringify(status)}`);
      const index = withNodeNames(() => this._native.addRoute(JSON.stringify(declared), status, group));
      this._handlers[index] = withScope(handler, this);
      this._routeScopes[index] = this;
      this._takesReply[index] = handler.length >= 2;
      this._starred[index] = starred;
      this._declared(index, declared);
      this._routeOptions[index] = routeOptionsOf(m, underPrefix(this._prefix, declaredPath), options || {});
      this._statuses[index] = status;
    }
    return this;
  }

  /** Notes what route `index`'s spec declares, for its requests' `Context`. */
  _declared(index, spec) {
    this._declares[index] = declaresOf(spec);
    this._queryNames[index] = spec.keep_undeclared_query ? spec.query.map((param) => param.name) : undefined;
  }

  /**
   * Declares a route from an explicit core RouteSpec (`{ method, path, query: [{name, schema,
   * required}], headers, cookies, path_params, body: {kind, schema}, ... }`), for routes
   * described as data such as the shared fixture corpus.
   */
  addRoute(spec, handler, { status = 200 } = {}) {
    if (typeof handler !== 'function') throw new TypeError('ferrule: addRoute needs a handler function');
    this._notListening(`${spec.method} ${spec.path}`);
    const index = nativeCall(() => this._native.addRoute(JSON.stringify(spec), status, this._group));
    this._handlers[index] = withScope(handler, this);
    this._routeScopes[index] = this;
    this._takesReply[index] = handler.length >= 2;
    this._isSocket[index] = Boolean(spec.websocket);
    this._declared(index, spec);
    this._routeOptions[index] = routeOptionsOf(spec.method, spec.path, {});
    this._statuses[index] = status;
    return this;
  }

  /**
   * A WebSocket route: `ws(path, [options], (socket, ctx) => …)`. Its `params`, `query`,
   * `headers` and `cookies` are validated before the upgrade (a bad request gets its problem
   * response and no connection), and the `onRequest` and `preHandler` hooks run on the
   * handshake (a reply one sends refuses the upgrade, as in @fastify/websocket); `socket` is a
   * `WebSocket` (the `ws` package's shape), `ctx` the request's values, with what the hooks
   * set on theirs (`ctx.user = …`). Options:
   * `subprotocols` (preferred first), `maxMessageBytes` (replaces the app's
   * `wsMaxMessageBytes`), `cors`.
   */
  ws(path, options, handler) {
    if (typeof options === 'function') {
      handler = options;
      options = {};
    }
    if (typeof handler !== 'function') throw new TypeError(`ferrule: WebSocket ${path}: the handler must be a function`);
    this._notListening(`WebSocket ${path}`);
    const { subprotocols = [], maxMessageBytes, ...rest } = options || {};
    checkOptions(rest, SOCKET_OPTIONS, `WebSocket option for ${path}:`);
    const spec = specOf('GET', path, rest);
    spec.websocket = { subprotocols: [...subprotocols].map(String) };
    if (maxMessageBytes !== undefined) spec.websocket.max_message_bytes = maxMessageBytes;
    const group = this._routeGroup(rest, `WebSocket ${path}`);
    const index = withNodeNames(() => this._native.addRoute(JSON.stringify(spec), 200, group));
    this._handlers[index] = withScope(handler, this);
    this._routeScopes[index] = this;
    this._isSocket[index] = true;
    this._statuses[index] = 200;
    this._declared(index, spec);
    this._routeOptions[index] = routeOptionsOf('GET', underPrefix(this._prefix, path), options || {});
    return this;
  }

  /**
   * Serves a directory (@fastify/static's `root` and `prefix`): `static({ root, prefix = '/',
   * index = true, precompressed = true, cacheControl, dotfiles = false })`. The core serves the
   * files (ETag and Last-Modified with 304s, Range, `.br`/`.gz` siblings, `index.html`) and
   * refuses any path that climbs out of `root`, and hidden files unless `dotfiles`; a prefix of
   * `/` serves the paths no route takes.
   */
  static(options) {
    if (options === null || typeof options !== 'object') throw new TypeError('ferrule: static takes { root, prefix }');
    checkOptions(options, ['root', 'prefix', 'index', 'precompressed', 'cacheControl', 'dotfiles', 'followSymlinks'], 'static option');
    const { root, prefix = '/', index = true, precompressed = true, cacheControl, dotfiles = false, followSymlinks = false } = options;
    if (typeof root !== 'string') throw new TypeError('ferrule: static needs root, the directory to serve');
    this._notListening(`static ${prefix}`);
    const spec = { prefix, directory: require('node:path').resolve(root), index, precompressed, dotfiles, follow_symlinks: followSymlinks };
    // `reply.sendFile(name)` names files below it, as @fastify/static's decorator does, by its rules.
    if (this._fileRoot === undefined || this._fileRoot === null) {
      this._fileRoot = spec.directory;
      this._fileRules = { dotfiles, followSymlinks };
    }
    if (cacheControl !== undefined) spec.cache_control = String(cacheControl);
    nativeCall(() => this._native.mountStatic(JSON.stringify(spec)));
    return this;
  }

  /**
   * Fastify's `addHook(name, fn)`, in Fastify's order: `onRequest(ctx, reply)` first — for
   * every request of this app or scope, those the core refused too — `preHandler(ctx, reply)`
   * after validation, `onSend(ctx, reply, payload)` before the response is written (return a
   * new payload, or change `reply`'s code and headers), `onError(ctx, reply, error)` when a hook
   * or the handler throws, or the core refused the request (a 400, 413, 415 or 422, with
   * `error.statusCode`; not a 404). A hook that calls `reply.send()` answers the request itself.
   * `async` functions and `done` callbacks both work. `onReady` (no arguments) runs once before
   * serving (`listen`, `inject`, `ready`); `onListen` (no arguments) once `listen()` has bound
   * its socket; `preClose` (no arguments) as `close()` begins, while in-flight requests are
   * still served; and `onClose(instance)` once after `close()`'s drain. These four get the app
   * (or the scope that declared them) as `this`, as in Fastify.
   */
  addHook(name, fn) {
    if (typeof fn !== 'function') throw new TypeError(`ferrule: the ${name} hook must be a function`);
    if (name === 'onRoute' || name === 'onRegister') {
      this._notListening(`the ${name} hook`);
      (name === 'onRoute' ? this._onRoute : this._onRegister).push(withScope(fn, this));
      return this;
    }
    if (LIFECYCLE_HOOKS.includes(name)) {
      // A preClose or onClose declared while serving still runs at close(); an onListen never would.
      if (name === 'onListen') this._notListening('the onListen hook');
      // An onClose hook gets the scope that declared it, as Fastify passes its instance.
      this._root._lifecycle[name].push(name === 'onClose' ? { hook: withScope(fn, this), scope: this } : withScope(fn, this));
      return this;
    }
    if (name in NOT_OFFERED) throw new TypeError(`ferrule: the ${name} hook is not offered: ${NOT_OFFERED[name]}`);
    const phase = PHASE_OF[name];
    if (!phase) throw new TypeError(`ferrule: ${native.unknownOption('hook', String(name), [...Object.keys(PHASE_OF), 'onRoute', 'onRegister', ...LIFECYCLE_HOOKS])}`);
    this._addHookFn(phase, adaptedHook(name, fn), name);
    return this;
  }

  /**
   * A route or hook is compiled into the server when it starts: one declared while it serves
   * would reach `inject()` and never the socket, so tests pass where production answers 404.
   * Refused, as Fastify refuses it (FST_ERR_INSTANCE_ALREADY_LISTENING).
   */
  _notListening(what) {
    if (this._root._port != null) throw new Error(`ferrule: ${what} is declared after listen(): the server serves what was declared when it started; declare routes and hooks before listen()`);
  }

  _addHookFn(phase, fn, kind, group = this._group) {
    this._notListening(kind === 'errorHandler' ? 'an error handler' : kind === 'notFound' ? 'a not-found handler' : `the ${kind} hook`);
    const slot = this._hookFns.length;
    this._hookFns.push({ fn: withScope(fn, this), kind });
    nativeCall(() => this._native.hook(group, phase, slot));
    // Fastify's onError hooks see a request that failed validation or parsing too (it sends
    // those as errors), not one no route took: the core hands such refusals over to them.
    if (kind === 'onError') nativeCall(() => this._native.catchFailures(group));
  }

  /** The `onRoute` hooks a route declared here meets: the app's, then each scope's down to this one. */
  _onRouteHooks() {
    const hooks = [];
    for (let scope = this; scope; scope = scope._parentScope) hooks.unshift(...scope._onRoute);
    return hooks;
  }

  /**
   * Fastify's `onRoute` hooks, each given the route's options as one object (`method`, `url`,
   * `path`, `routePath`, `prefix`, `handler`, `config` and the options given) to read or change:
   * @fastify/rate-limit adds its `onRequest` hook to every route this way, @fastify/helmet moves
   * its `helmet` option into `config`. What they leave is the route declared.
   */
  _routeThroughHooks(hooks, method, path, options, handler) {
    const url = underPrefix(this._prefix, path);
    const routeOptions = { ...options, method, url, path: url, routePath: path, prefix: this._prefix || '', handler, config: { ...(options.config ?? {}) } };
    for (const hook of hooks) hook(routeOptions);
    const { method: changedMethod, url: _url, path: _path, routePath: _routePath, prefix: _prefix, handler: changedHandler, ...rest } = routeOptions;
    if (typeof changedHandler !== 'function') throw new TypeError(`ferrule: ${method} ${path}: an onRoute hook left no handler function`);
    return { method: changedMethod, options: rest, handler: changedHandler };
  }

  /**
   * The group a route is declared in: this scope's, or, when its options name hooks (Fastify's
   * route-level `onRequest`, `preHandler`, … — a function or a list), a group of its own under
   * this scope's, whose hooks run after the app's and the scopes' and for no other route (a
   * request no route matched never meets them).
   */
  _routeGroup(options, where) {
    const named = ROUTE_HOOKS.filter((name) => options[name] !== undefined);
    if (named.length === 0) return this._group;
    const hooks = named.map((name) => {
      if (name in NOT_OFFERED) throw new TypeError(`ferrule: ${where}: the ${name} hook is not offered: ${NOT_OFFERED[name]}`);
      const fns = Array.isArray(options[name]) ? options[name] : [options[name]];
      for (const fn of fns) {
        if (typeof fn !== 'function') throw new TypeError(`ferrule: ${where}: ${name} must be a function or a list of functions`);
      }
      return [name, fns];
    });
    const group = nativeCall(() => this._native.routeGroup(this._group));
    for (const [name, fns] of hooks) {
      for (const fn of fns) this._addHookFn(PHASE_OF[name], adaptedHook(name, fn), name, group);
    }
    return group;
  }

  /**
   * `setErrorHandler((error, ctx, reply) => …)`: answers what this app's (or scope's) hooks
   * and handlers throw, and the requests the core refuses (`error.statusCode`; a 422's
   * `error.validation` lists its errors), with `reply.send()` or a return value.
   */
  setErrorHandler(handler) {
    if (typeof handler !== 'function') throw new TypeError('ferrule: the error handler must be a function');
    this._addHookFn('onError', handler, 'errorHandler');
    nativeCall(() => this._native.catch(this._group, null));
    return this;
  }

  /** `setNotFoundHandler((ctx, reply) => …)`: answers the requests no route takes (404). */
  setNotFoundHandler(handler) {
    if (typeof handler !== 'function') throw new TypeError('ferrule: the not-found handler must be a function');
    this._addHookFn('onError', handler, 'notFound');
    nativeCall(() => this._native.catch(this._group, 404));
    return this;
  }

  /**
   * Fastify's `register(plugin, { prefix })`: `plugin(scope, options)` declares routes and
   * hooks on `scope`, served under `prefix`; its hooks and handlers run after the app's, for
   * its own routes only. An async plugin (or one taking `done`) is waited for by `ready()`,
   * `listen()` and `inject()`.
   */
  register(plugin, options = {}) {
    if (typeof plugin !== 'function') throw new TypeError('ferrule: register takes a plugin function');
    this._notListening('a plugin');
    if (plugin[CORE_PLUGIN]) {
      // @fastify/cors and @fastify/compress are global (fastify-plugin): the app's setting.
      const setting = plugin[CORE_PLUGIN];
      const root = this._root;
      root._corePlugins ||= new Set();
      if (root._corePlugins.has(setting) || root._settingsGiven.has(setting)) {
        throw new Error(`ferrule: register(${plugin.name}): ${setting} is already set`);
      }
      const { prefix, ...given } = options || {};
      nativeCall(() => root._native.configure(JSON.stringify({ [setting]: plugin.settingsOf(given) })));
      root._corePlugins.add(setting);
      return this;
    }
    const { prefix = '', ...rest } = options || {};
    let scope = this;
    // A plugin wrapped by `fastify-plugin` (its skip-override mark) is not a scope of its
    // own: its hooks and decorators land on the app or scope that registers it, as Fastify's
    // do (an auth hook shared this way guards every route).
    if (!plugin[Symbol.for('skip-override')]) {
      const group = nativeCall(() => this._native.group(this._group, String(prefix)));
      scope = Object.create(this);
      scope._group = group;
      scope._onRoute = [];
      scope._onRegister = [];
      scope._parentScope = this;
      scope._prefix = `${this._prefix || ''}${prefix}`;
      // Fastify's onRegister: each hook from the app down to here meets the new scope.
      for (let at = this; at; at = at._parentScope) {
        for (const hook of at._onRegister) hook(scope, rest);
      }
    }
    // `ready()` takes `_pending` as it waits: what this call adds is read from a log kept whole.
    const log = this._root._loadLog;
    const from = log.length;
    const done = plugin.length >= 3
      ? new Promise((resolve, reject) => plugin(scope, rest, (error) => (error ? reject(error) : resolve())))
      : plugin(scope, rest);
    if (done && typeof done.then === 'function') {
      this._root._pending.push(done);
      log.push(done);
    }
    return registration(this, log.slice(from));
  }

  /**
   * Fastify's `addContentTypeParser(type, [{ parseAs, bodyLimit }], parser)`: the body of a
   * request of that content type (a string, a list of them, a RegExp, or `'*'` for any other)
   * is what `parser(request, payload, done)` gives, or what it returns (a Promise too), read as
   * `request.body` by the hooks after `onRequest` and the handler. `payload` is the body as a
   * string (`parseAs: 'string'`), a Buffer (`'buffer'`) or a stream. It parses bodies of routes
   * that declare none (a route's `body`/`form`/`multipart` schema is the core's to read and
   * validate); one that fails is a 400 unless its error says its status. App-wide.
   */
  addContentTypeParser(contentType, options, parser) {
    if (typeof options === 'function') {
      parser = options;
      options = {};
    }
    if (typeof parser !== 'function') throw new TypeError('ferrule: addContentTypeParser needs a parser function');
    checkOptions(options || {}, ['parseAs', 'bodyLimit'], 'content-type parser option');
    const { parseAs, bodyLimit } = options || {};
    if (parseAs !== undefined && parseAs !== 'string' && parseAs !== 'buffer') {
      throw new TypeError(`ferrule: parseAs is 'string' or 'buffer', not ${JSON.stringify(parseAs)}`);
    }
    if (bodyLimit !== undefined && !(Number.isInteger(bodyLimit) && bodyLimit > 0)) throw new TypeError(`ferrule: bodyLimit is a number of bytes, not ${JSON.stringify(bodyLimit)}`);
    this._notListening('a content-type parser');
    const root = this._root;
    for (const type of Array.isArray(contentType) ? contentType : [contentType]) {
      if (!(type instanceof RegExp) && typeof type !== 'string') throw new TypeError('ferrule: a content type is a string or a RegExp');
      const key = typeof type === 'string' ? mediaType(type) : type;
      if (typeof key === 'string' && root._parsers.some((known) => known.type === key)) {
        throw new TypeError(`ferrule: a parser for ${type} exists already (removeContentTypeParser first)`);
      }
      root._parsers.push({ type: key, parseAs, bodyLimit, fn: withScope(parser, this) });
    }
    return this;
  }

  hasContentTypeParser(contentType) {
    const key = typeof contentType === 'string' ? mediaType(contentType) : contentType;
    if (BUILT_IN_TYPES.includes(key)) return true;
    return this._root._parsers.some((known) => (key instanceof RegExp ? String(known.type) === String(key) : known.type === key));
  }

  removeContentTypeParser(contentType) {
    const root = this._root;
    for (const type of Array.isArray(contentType) ? contentType : [contentType]) {
      const key = typeof type === 'string' ? mediaType(type) : type;
      const kept = root._parsers.filter((known) => (key instanceof RegExp ? String(known.type) !== String(key) : known.type !== key));
      root._parsers.splice(0, root._parsers.length, ...kept);
    }
    return this;
  }

  removeAllContentTypeParsers() {
    this._root._parsers.splice(0);
    return this;
  }

  /**
   * Fastify's `decorate(name, value)`: the app (or scope, and the scopes under it) has `name`,
   * a value or a function, as `app.db`; a name it has already is refused.
   */
  decorate(name, value) {
    if (name in this) throw new TypeError(`ferrule: the app already has ${name}`);
    if (isAccessor(value)) {
      // `decorate('config', { getter() { … } })`: a property read through it, as Fastify
      // defines it (found by a probe: the object itself was stored, and `app.config.env` was
      // undefined).
      Object.defineProperty(this, name, { get: value.getter, set: value.setter, configurable: true, enumerable: true });
      return this;
    }
    this[name] = value;
    return this;
  }

  hasDecorator(name) {
    return name in this;
  }

  /** The app's logger (Fastify's `app.log`): pino's levels and `child()`; made once. */
  get log() {
    const root = this._root;
    if (root._log === undefined) root._log = logFacade(root._logger);
    return root._log;
  }

  /**
   * Fastify's `decorateRequest(name, value)`: every `ctx` has `name` — a method (a function),
   * or a default that hooks set per request (`null`, a string, a number). Objects would be
   * shared by every request, so they are refused, as Fastify refuses them.
   */
  decorateRequest(name, value) {
    // A plugin declaring, with an empty default, a field the request has already (@fastify/cookie's
    // `cookies`, which its hook then sets): the request's own stands, and the plugin's hook may
    // set it as it would in Fastify.
    if (value == null && SETTABLE_FIELDS.includes(name)) return this;
    const proto = this._own('_Context').prototype;
    if (name in proto || CONTEXT_FIELDS.includes(name)) throw new TypeError(`ferrule: the request already has ${String(name)}`);
    if (isAccessor(value)) {
      // A getter is read per request (`this` the request), so nothing is shared.
      Object.defineProperty(proto, name, { get: value.getter, set: value.setter, configurable: true, enumerable: false });
      return this;
    }
    if (value !== null && typeof value === 'object') {
      throw new TypeError(`ferrule: decorateRequest('${name}') with an object would share it between requests; set it per request in an onRequest hook`);
    }
    Object.defineProperty(proto, name, { value, writable: true, configurable: true, enumerable: false });
    return this;
  }

  hasRequestDecorator(name) {
    return name in this._Context.prototype;
  }

  /**
   * This scope's own request (`_Context`) or reply (`_Reply`) class, made on first use as a
   * subclass of its parent's: a plugin's decorations reach its own routes and the scopes under
   * it, not its siblings' or the app's, as in Fastify (found by a probe: @fastify/jwt could not
   * be registered in two scopes). An app that decorates only at its root has one class.
   */
  _own(field) {
    if (!Object.hasOwn(this, field)) this[field] = class extends this[field] {};
    return this[field];
  }

  /**
   * Fastify's `decorateReply(name, value)`: every `reply` has `name` — a method (`this` the
   * reply: `reply.notFound()`), an accessor (`{ getter, setter }`) or a default a hook sets
   * per request. Objects would be shared by every request, so they are refused, as Fastify
   * refuses them.
   */
  decorateReply(name, value) {
    const proto = this._own('_Reply').prototype;
    if (name in proto || Object.hasOwn(new Reply(200, null), name)) throw new TypeError(`ferrule: the reply already has ${String(name)}`);
    if (isAccessor(value)) {
      Object.defineProperty(proto, name, { get: value.getter, set: value.setter, configurable: true, enumerable: false });
      return this;
    }
    if (value !== null && typeof value === 'object') {
      throw new TypeError(`ferrule: decorateReply('${name}') with an object would share it between requests; set it per request in a hook`);
    }
    Object.defineProperty(proto, name, { value, writable: true, configurable: true, enumerable: false });
    return this;
  }

  hasReplyDecorator(name) {
    return name in this._Reply.prototype;
  }

  /**
   * Waits for async `register` plugins, then runs the `onReady` hooks (once). `listen()` and
   * `inject()` call it; a hook that throws rejects it (and them) with that error.
   */
  ready() {
    const root = this._root;
    if (!root._lifecycle.ready) {
      root._lifecycle.ready = (async () => {
        while (root._pending.length > 0) await Promise.all(root._pending.splice(0));
        for (const hook of root._lifecycle.onReady) await callHook(hook, []);
      })();
    }
    return root._lifecycle.ready;
  }

  /**
   * The app's OpenAPI 3.1 document, as served at `openapiUrl` (`/openapi.json`; `null` serves
   * none): every route declared so far, with `summary`, `description`, `tags`, `operationId`,
   * `deprecated` and `hide` from its options (or its Fastify-style `schema`).
   */
  openapi() {
    return JSON.parse(nativeCall(() => this._native.openapi()));
  }

  get(path, options, handler) { return this.route('GET', path, options, handler); }
  post(path, options, handler) { return this.route('POST', path, options, handler); }
  put(path, options, handler) { return this.route('PUT', path, options, handler); }
  patch(path, options, handler) { return this.route('PATCH', path, options, handler); }
  delete(path, options, handler) { return this.route('DELETE', path, options, handler); }
  head(path, options, handler) { return this.route('HEAD', path, options, handler); }
  options(path, options, handler) { return this.route('OPTIONS', path, options, handler); }
  /** Fastify's `all(path, [options], handler)`: the route for every method (found by a probe: a TypeError). */
  all(path, options, handler) { return this.route(METHODS, path, options, handler); }

  /** The port being served, while listening. */
  get port() {
    return this._port;
  }

  /**
   * Serves until `close()` (or SIGINT/SIGTERM when `handleSignals`, the default). Resolves
   * with `{ host, port }` once listening; `listen(8000)` and `listen(8000, '0.0.0.0')` work as
   * in Express and Node's `server.listen`. With `workers: N > 1` the primary process binds the
   * port once (a port in use fails there, with `code: 'EADDRINUSE'`), forks N workers
   * (node:cluster) that inherit the socket, and resolves when they have all exited. `log:
   * false` leaves out the startup line. A function as the last argument is called back too:
   * Fastify's `listen(options, (error, address) => …)`, Express's `listen(port[, host], () => …)`
   * (in the primary of `listen({ workers })`, as its Promise resolves: once every worker has
   * exited, with no address).
   */
  listen(options = {}, hostArgument, callback) {
    if (typeof hostArgument === 'function') [hostArgument, callback] = [undefined, hostArgument];
    const listening = this._listen(options, hostArgument);
    if (typeof callback === 'function') {
      const addressOf = ({ host, port }) => (port === undefined ? undefined : urlOf(host, port));
      listening.then((info) => callback(null, addressOf(info)), (error) => callback(error));
    }
    return listening;
  }

  async _listen(options, hostArgument) {
    if (this !== this._root) return this._root._listen(options, hostArgument);
    if (process.env.FERRULE_PRINT_OPENAPI === '1') {
      // `ferrule openapi app.js`: the app's document instead of a server (see cli.js).
      require('node:fs').writeSync(1, nativeCall(() => this._native.openapi()));
      process.exit(0);
    }
    if (typeof options === 'number' || typeof options === 'string') {
      options = { port: Number(options), ...(hostArgument === undefined ? {} : { host: hostArgument }) };
    }
    if (options === null || typeof options !== 'object') throw new TypeError('ferrule: listen takes a port or an options object');
    checkOptions(options, LISTEN_OPTIONS, 'listen option');
    const { host = '127.0.0.1', workers = 1, threads, handleSignals = true, log = true } = options;
    // `listen({ port: process.env.PORT })`: a port in decimal text is that port, as Fastify
    // reads it (found by a probe: it was refused).
    const port = typeof options.port === 'string' && /^\d+$/.test(options.port.trim()) ? Number(options.port) : options.port ?? 8000;
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`ferrule: port ${port} is not a TCP port (0-65535)`);
    if (workers > 1 && cluster.isPrimary) return supervise(host, port, workers, handleSignals);
    try {
      await this.ready();
    } catch (error) {
      error.message = `ferrule: startup failed (an onReady hook threw): ${error.message}`;
      // A worker of listen({ workers }) tells its primary, which stops them all: caught and
      // left running, it would hold its share of the port and answer nothing.
      if (cluster.isWorker && process.env.FERRULE_LISTEN_FD && typeof process.send === 'function') process.send({ ferrule: 'failed', message: error.message });
      throw error;
    }
    const inWorker = cluster.isWorker;
    let signals = null;
    let stoppedBySignal = false;
    let resolveClosed;
    // Becomes `_closed` once the server is up: a listen() refused (a port in use, a server
    // already running) leaves close() waiting for the server that is, or for nothing.
    const closed = new Promise((resolve) => { resolveClosed = resolve; });
    const native = this._native;
    const logger = this._logger;
    const dispatcher = this._dispatch();
    const onLogs = logger && logger !== SILENT && (() => {
      const records = native.takeLogs();
      for (let i = 0; i < records.length; i += 4) emitLog(logger, records[i], records[i + 1], records[i + 2], records[i + 3]);
    });
    const onJobs = () => {
      try {
        const batch = native.dispatch();
        if (batch === null) {
          // Stopped by a signal and the drain deadline cut requests off: one line was printed;
          // the exit status says so too. (A close() the program asked for leaves it its own.)
          if (stoppedBySignal && native.drainCutOff()) process.exitCode = 1;
          if (onLogs) onLogs(); // what the server said on its way out
          // The drain closed every WebSocket; their ends arrived after the last batch. Nothing
          // a handler does then may keep close() from resolving.
          try {
            dispatcher.sockets.stopped();
          } catch (error) {
            console.error('ferrule: closing WebSockets failed:', error);
          }
          native.release();
          this._port = null;
          if (signals) for (const s of ['SIGINT', 'SIGTERM']) process.removeListener(s, signals);
          resolveClosed();
          return;
        }
        dispatcher.runBatch(batch);
        native.flush();
      } catch (error) {
        console.error('ferrule: dispatching requests failed:', error);
      }
    };
    const fd = inWorker && process.env.FERRULE_LISTEN_FD ? Number(process.env.FERRULE_LISTEN_FD) : undefined;
    try {
      this._port = nativeCall(() => native.listen(onJobs, onLogs || undefined, host, port, fd, threads));
      this._closed = closed;
    } catch (error) {
      // A cluster started by hand: each worker binds the port, and the second finds it taken.
      if (error.code === 'EADDRINUSE' && inWorker && fd === undefined) {
        error.message += ' — in a cluster worker, let listen({ workers }) fork the workers: the primary binds the port once and they share it';
      }
      throw error;
    }
    if (log) native.announce();
    // Tells the primary of listen({ workers }) this worker started (see supervise).
    if (inWorker && fd !== undefined && typeof process.send === 'function') process.send({ ferrule: 'serving' });
    if (handleSignals) {
      // A cluster worker's IPC channel would keep it alive after closing: let go of it too.
      // Kept until the drain ends (\`on\`, not \`once\`): a second signal, which \`timeout\` or a
      // process manager sends to the whole group, would otherwise meet Node's default and kill
      // the process with requests in flight. As in Python, a repeated signal changes nothing.
      signals = () => {
        if (stoppedBySignal) return;
        stoppedBySignal = true;
        // No caller hears what a hook's failure rejects close() with: logged, and the exit
        // status says so.
        this.close()
          .catch((error) => {
            this.log.error({ err: error }, `closing on a signal failed: ${error?.message ?? error}`);
            process.exitCode = 1;
          })
          .then(() => { if (inWorker) cluster.worker.disconnect(); });
      };
      process.on('SIGINT', signals);
      process.on('SIGTERM', signals);
    }
    // Not awaited: Fastify's listen() resolves, then starts its onListen hooks (lib/server.js).
    this._runOnListen();
    return listening(host, this._port);
  }

  /**
   * The `onListen` hooks, one after another. One that fails is logged and the rest still run:
   * the server is up by then, and Fastify does not stop it for them either.
   */
  async _runOnListen() {
    for (const hook of this._lifecycle.onListen) {
      try {
        await callHook(hook, []);
      } catch (error) {
        this.log.error({ err: error }, `an onListen hook failed: ${error?.message ?? error}`);
      }
    }
  }

  /**
   * Sends one request through the whole core without a socket — routing, validation, hooks,
   * compression, problem responses — as Fastify's `inject` does: `inject({ method, url, query,
   * headers, cookies, payload })` (or `inject(url)`) resolves with `{ statusCode, headers,
   * body, payload, rawPayload, json(), cookies }`; with a callback `(error, response)` as its
   * second argument, that is called instead. Works whether or not the app is listening.
   */
  inject(options, callback) {
    // `inject()`: light-my-request's chain (`.get(url).headers({...}).end()`, or awaited). It
    // was a rejected Promise nothing could catch, which ended the process (found by a probe).
    if (options === undefined && callback === undefined) return new InjectChain(this);
    const promise = this._inject(options);
    if (typeof callback !== 'function') return promise;
    promise.then((response) => callback(null, response), (error) => callback(error));
    return undefined;
  }

  async _inject(options) {
    if (this !== this._root) return this._root._inject(options);
    // A stream payload (light-my-request takes one: a form-data body, a file) is read whole.
    const payload = options !== null && typeof options === 'object' ? options.payload ?? options.body : undefined;
    const iterable = payload !== null && typeof payload === 'object' && !Buffer.isBuffer(payload) && typeof payload[Symbol.asyncIterator] === 'function';
    // The form-data package's stream is a legacy one (pipe, no async iterator): piped through.
    const piped = !iterable && payload !== null && typeof payload === 'object' && typeof payload.pipe === 'function';
    if (iterable || piped) {
      const source = piped ? payload.pipe(new (require('node:stream').PassThrough)()) : payload;
      const chunks = [];
      for await (const chunk of source) chunks.push(Buffer.from(chunk));
      options = { ...options, payload: Buffer.concat(chunks), body: undefined };
    }
    const request = injectRequest(options);
    await this.ready();
    const dispatcher = this._dispatch();
    if (!this._onLocalJobs) {
      const native = this._native;
      this._onLocalJobs = () => {
        try {
          const batch = native.dispatchLocal();
          if (batch === null) return;
          dispatcher.runBatch(batch);
          native.flush();
        } catch (error) {
          console.error('ferrule: dispatching injected requests failed:', error);
        }
      };
    }
    return new Promise((resolve, reject) => {
      try {
        const exchange = nativeCall(() => this._native.inject(this._onLocalJobs, request.method, request.url, request.headers, request.body));
        dispatcher.awaitExchange(exchange, resolve);
      } catch (error) {
        reject(error);
      }
    });
  }

  /** The one dispatcher of this app's jobs, shared by `listen` and `inject`. */
  _dispatch() {
    const root = this._root;
    if (!root._dispatcher) root._dispatcher = new Dispatcher(root);
    return root._dispatcher;
  }

  /**
   * Runs the `preClose` hooks, stops accepting connections, lets in-flight requests finish,
   * then runs the `onClose` hooks; resolves when done. A `preClose` hook that fails skips the
   * ones after it, and close() goes on, then rejects with its error, as Fastify's does.
   */
  close(callback) {
    const root = this._root;
    if (!root._closing) root._closing = root._close().finally(() => { root._closing = null; });
    const closing = root._closing;
    // Fastify's `close(callback)` too.
    if (typeof callback === 'function') closing.then(() => callback(), callback);
    return closing;
  }

  async _close() {
    const root = this._root;
    // Fastify's return503OnClosing: while preClose hooks run and the drain after them, a
    // request that arrives (or is injected) gets 503 rather than a handler whose resources
    // preClose is releasing. With no preClose hook nothing is released before the drain, so the
    // requests read until it begins are served: a drain loses nothing (the README's promise,
    // which the reliability probe's shutdown leg checks).
    const refusing = root._return503OnClosing && Boolean(root._lifecycle.ready) && root._lifecycle.preClose.length > 0;
    if (refusing) root._native.refuseRequests(true);
    try {
      await root._closeSteps();
    } finally {
      if (refusing) root._native.refuseRequests(false);
    }
  }

  async _closeSteps() {
    const root = this._root;
    let preCloseFailure = null;
    if (root._lifecycle.ready) {
      try {
        for (const hook of root._lifecycle.preClose) await callHook(hook, []);
      } catch (error) {
        preCloseFailure = error;
      }
    }
    if (root._closed) {
      root._native.close();
      await root._closed;
    }
    if (root._lifecycle.ready) {
      root._lifecycle.ready = null;
      // Last declared first, as Fastify closes its plugins: a plugin's pool, opened before
      // the plugin that flushes through it, is closed after it (found by a probe).
      for (const { hook, scope } of [...root._lifecycle.onClose].reverse()) await callOnClose(hook, scope);
    }
    // The in-process router's thread goes too (unless an inject is under way); inject() after
    // close() builds another.
    root._native.releaseInProcess();
    if (preCloseFailure !== null) throw preCloseFailure;
  }
}

/**
 * Runs the jobs the core hands to JavaScript — requests, stream pulls and releases, WebSocket
 * arrivals, answers to injected requests — for the server (`listen`) and the in-process router
 * (`inject`) alike: one per app, so their streams and sockets share one numbering.
 */
/**
 * Runs `fn` for one request in an async context of its own, as each request of Node's own HTTP
 * server is. Every batch arrives through the one async resource of the addon's wake-up, so what
 * `AsyncLocalStorage.enterWith()` set in one handler was that resource's store, read by every
 * later request; the promises and timers a handler starts now inherit the request's context
 * instead. Whatever runs user code later for a request does so in a scope of that request's,
 * never in the wake-up's: a WebSocket's messages (`Sockets.arrived`), a stream's close
 * (`Streams.close`). Costs 45–90 ns a request on Node 20 (a fresh resource and its scope,
 * measured in a loop of 2 million, without and with an `AsyncLocalStorage` in use), more when
 * a `destroy` async hook is installed.
 */
function inOwnContext(fn, self, a, b, c, d, e) {
  return new AsyncResource('ferrule.request').runInAsyncScope(fn, self, a, b, c, d, e);
}

/** The core's name for the rest of a path Fastify's `*` takes. */
const STAR_PARAM = 'ferrule_star';

/** `params['*']`, Fastify's name for what a route's trailing `*` took, in place of the core's
 * (once: a handler that takes a reply goes on from `run()` to `runHooked()`). */
function starParams(ctx) {
  if (!(STAR_PARAM in ctx.params)) return;
  const { [STAR_PARAM]: rest, ...params } = ctx.params;
  params['*'] = rest;
  ctx.params = params;
}

/** Where a hook type runs within the core's phase it shares with others, in Fastify's order. */
const HOOK_RANK = { onRequest: 0, preParsing: 1, preValidation: 2, preSerialization: 0, onSend: 1 };

/** The chain of a route without hooks whose handler takes a reply (`Dispatcher.run`). */
const NO_HOOKS = Object.freeze({ parseAt: 0, onRequest: [], preHandler: [], onSend: [], onError: [], errorHandlers: [], notFound: null });

/**
 * A Fastify hook as the phase it runs in calls it: `preParsing` gets the body as a stream (and
 * may give another, read in its place), `preSerialization` only a payload that is to be
 * serialised. The others are called as they are.
 */
function adaptedHook(name, fn) {
  if (name === 'preParsing') return preParsingHook(fn);
  if (name === 'preSerialization') return preSerializationHook(fn);
  return fn;
}

/**
 * Fastify's `preParsing(request, reply, payload, [done])`: `payload` is the body as sent, a
 * stream; a stream the hook gives back (a decompressed one) is read whole and becomes the body
 * of a route that declares none (a declared body was read and validated by the core already).
 * Found by a probe: called as an onRequest hook, its `payload` was `done` and its `done` absent,
 * so every request was a 500.
 */
function preParsingHook(hook) {
  const takesDone = hook.length >= 4;
  return function preParsing(ctx, reply, done) {
    const payload = bodyStream(ctx.rawBody);
    let finished = false;
    const finish = (error, given) => {
      if (finished) return;
      finished = true;
      if (error) return done(error);
      if (given == null || given === payload || typeof given.on !== 'function') return done();
      const chunks = [];
      given.on('data', (chunk) => chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)));
      given.on('error', (failure) => done(failure));
      given.on('end', () => {
        if (ctx[BODY] === UNREAD) rawParts(ctx)[0] = Buffer.concat(chunks);
        done();
      });
    };
    const returned = takesDone ? hook.call(this, ctx, reply, payload, finish) : hook.call(this, ctx, reply, payload);
    if (isThenable(returned)) returned.then((given) => finish(null, given), (error) => finish(error ?? new Error('ferrule: a preParsing hook rejected without a reason')));
    else if (!takesDone) finish(null, returned);
  };
}

/**
 * Fastify's `preSerialization(request, reply, payload, [done])`, which Fastify calls only for a
 * payload it is to serialise: not for text, a Buffer, a stream, null, a file or an error's
 * answer (found by a probe: an envelope hook wrapped the problem's bytes).
 */
function preSerializationHook(hook) {
  const takesDone = hook.length >= 4;
  return function preSerialization(ctx, reply, payload, done) {
    if (payload === null || typeof payload !== 'object' || Buffer.isBuffer(payload) || payload instanceof Uint8Array
        || typeof payload.pipe === 'function' || payload instanceof Response || payload instanceof SentFile || payload instanceof Error) {
      return done(null, payload);
    }
    const returned = takesDone ? hook.call(this, ctx, reply, payload, done) : hook.call(this, ctx, reply, payload);
    if (isThenable(returned)) returned.then((value) => done(null, value), (error) => done(error ?? new Error('ferrule: a preSerialization hook rejected without a reason')));
    else if (!takesDone) done(null, returned);
    return undefined;
  };
}

/** `body` as a readable stream (what Fastify hands parsers and preParsing hooks). */
function bodyStream(body) {
  const stream = new (require('node:stream').Readable)({ read() {} });
  if (body.length > 0) stream.push(body);
  stream.push(null);
  return stream;
}

/**
 * What `register` returns: the app (its methods chain: `app.register(a).register(b)`), and a
 * thenable, so `await app.register(plugin)` waits for that plugin (and for those it registered
 * while it was called) and resolves to the app, as Fastify's does. The app itself is no
 * thenable: one would wait for every plugin, so a plugin that awaited it (or returned it) would
 * wait for itself.
 */
function registration(app, loading) {
  return new Proxy(app, {
    get(target, name) {
      if (name === 'then') {
        return (onFulfilled, onRejected) => Promise.all(loading).then(() => (typeof onFulfilled === 'function' ? onFulfilled(target) : target), onRejected);
      }
      const value = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

class Dispatcher {
  constructor(app) {
    const native = app._native;
    const logger = app._logger;
    this.app = app;
    this.native = native;
    this.handlers = app._handlers;
    this.takesReply = app._takesReply;
    this.starred = app._starred;
    /** The app's `addContentTypeParser` list, live (an empty one costs `run()` a length read). */
    this.parsers = app._parsers;
    /** By route: its scope's request and reply classes (the app's, unless a scope decorated). */
    this.contextOf = app._routeScopes.map((scope) => scope._Context);
    this.replyOf = app._routeScopes.map((scope) => scope._Reply);
    this.isSocket = app._isSocket;
    /** The `ctx` of each WebSocket handshake the hooks let through, by its handshake id, until its socket opens. */
    this.admitted = new Map();
    this.logger = logger;
    /** Each hook chain the core numbered, resolved into functions once. */
    this.chains = [];
    let flushQueued = false;
    this.flushSoon = () => {
      if (flushQueued) return;
      flushQueued = true;
      queueMicrotask(() => { flushQueued = false; native.flush(); });
    };
    this.streams = new Streams(native, logger, this.flushSoon);
    this.sockets = new Sockets(native, app._handlers, (ctx, error) => handlerError(logger, ctx, 'the WebSocket handler threw', error), nativeCall);
    /** Injected requests under way: their promises' resolve functions, by exchange id. */
    this.exchanges = new Map();
    /** A timer held while injected requests are under way: the addon's in-process callback
     * does not keep Node's event loop alive by itself, and a pending Promise does not either.
     * It also holds this dispatcher, and so the app: the addon holds the app's in-process
     * callback weakly, so that an app is collected once its program lets go of it, and
     * `await build().inject(…)` lets go of it before the answer arrives. */
    this.keepAlive = null;
  }

  awaitExchange(exchange, resolve) {
    this.exchanges.set(exchange, resolve);
    if (this.keepAlive === null) this.keepAlive = setInterval(() => this, 0x7fffffff);
  }

  answered(exchange, response) {
    const resolve = this.exchanges.get(exchange);
    this.exchanges.delete(exchange);
    if (this.exchanges.size === 0 && this.keepAlive !== null) {
      clearInterval(this.keepAlive);
      this.keepAlive = null;
    }
    if (resolve) resolve(response);
  }

  /**
   * One batch: [id, route, method, path, params, query, headers, cookies, body, requestId,
   * chain] per request (chain: its hook chain's number, -1 for none), [-1, stream] per pull of
   * a stream, [-2, stream] per stream whose client left, [-3, socket, route, …as a request,
   * raw parts] per WebSocket opened, [-4, socket] per socket with messages (or its end) waiting, [-5,
   * exchange, status, headers, body, cutOff] per injected request answered, [-6, id, route or
   * -1, …as a request, chain, status, problem, headers] per refused request its hooks or
   * handlers must see, [-7, id] per request whose client left while its `ctx.signal` was read,
   * [-8, handshake, …a request] per WebSocket handshake its hooks see (the -3 entry of its
   * socket ends with the same handshake, -1 for a socket without one), [-9, handshake] per
   * such handshake that will not open.
   * Once synchronous handlers have kept this batch for a while, each further request is
   * checked before it starts: one whose deadline passed meanwhile is skipped (the client
   * already has its 504), so overruns do not pile up behind each other.
   */
  runBatch(batch) {
    const { native, streams, sockets } = this;
    const started = batch.length > 10 ? performance.now() : 0;
    for (let i = 0; i < batch.length;) {
      const id = batch[i];
      if (id === -3) {
        const ctx = socketContext(native, batch, i + 1, this.contextOf[batch[i + 2]] ?? this.app._Context);
        const handshake = batch[i + 12];
        if (handshake >= 0) {
          carryOver(this.admitted.get(handshake), ctx);
          this.admitted.delete(handshake);
        }
        // The socket keeps its scope: its messages are delivered in it (`Sockets.arrived`).
        const scope = new AsyncResource('ferrule.request');
        scope.runInAsyncScope(sockets.opened, sockets, batch[i + 1], batch[i + 2], ctx, scope);
        i += 13;
        continue;
      }
      if (id === -6) {
        const refusal = { status: batch[i + 12], problem: batch[i + 13], headers: batch[i + 14] };
        inOwnContext(this.runHooked, this, batch[i + 1], batch[i + 2], new (this.contextOf[batch[i + 2]] ?? this.app._Context)(native, batch, i + 1), batch[i + 11], refusal);
        i += 15;
        continue;
      }
      if (id === -5) {
        this.answered(batch[i + 1], injectResponse(batch[i + 2], batch[i + 3], batch[i + 4], batch[i + 5]));
        i += 6;
        continue;
      }
      if (id < 0) {
        if (id === -8) {
          // A WebSocket's handshake, which its hooks see: its request follows.
          const at = i + 2;
          const ctx = new (this.contextOf[batch[at + 1]] ?? this.app._Context)(native, batch, at);
          ctx[HANDSHAKE] = batch[i + 1];
          inOwnContext(this.runHooked, this, batch[at], batch[at + 1], ctx, batch[at + 10], null);
          i = at + 11;
          continue;
        }
        if (id === -1) streams.pulled(batch[i + 1]);
        else if (id === -2) streams.release(batch[i + 1]);
        else if (id === -7) departed(native, batch[i + 1]);
        else if (id === -9) this.admitted.delete(batch[i + 1]);
        else sockets.arrived(batch[i + 1]);
        i += 2;
        continue;
      }
      if (!(i > 0 && performance.now() - started > 5 && !native.wanted(id))) {
        const chain = batch[i + 10];
        const Made = this.contextOf[batch[i + 1]] ?? this.app._Context;
        if (chain < 0) inOwnContext(this.run, this, id, batch[i + 1], new Made(native, batch, i));
        else inOwnContext(this.runHooked, this, id, batch[i + 1], new Made(native, batch, i), chain, null);
      }
      i += 11;
    }
  }

  /** Chain `number`'s functions: `{ onRequest, preHandler, onSend, onError, errorHandlers, notFound }`. */
  chain(number) {
    if (number < 0) return NO_HOOKS;
    let chain = this.chains[number];
    if (!chain) {
      const [onRequest, preHandler, onSend, onError] = this.native.hooksOf(number);
      const fns = this.app._hookFns;
      const last = (kind) => onError.map((slot) => fns[slot]).filter((h) => h.kind === kind).map((h) => h.fn).pop() || null;
      // The core orders a phase's hooks by scope (the app's, then each scope's, then the
      // route's), each in the order declared; Fastify runs every hook of one type before the
      // next type's, so a route's onRequest comes before the app's preValidation (a stable sort).
      const inFastifyOrder = (slots) => slots.map((slot) => fns[slot]).sort((a, b) => (HOOK_RANK[a.kind] ?? 0) - (HOOK_RANK[b.kind] ?? 0));
      const requestHooks = inFastifyOrder(onRequest);
      const parseAt = requestHooks.findIndex((hook) => hook.kind === 'preValidation');
      chain = {
        // Fastify parses a body after onRequest and preParsing, before preValidation.
        parseAt: parseAt < 0 ? requestHooks.length : parseAt,
        onRequest: requestHooks.map((hook) => hook.fn),
        preHandler: preHandler.map((slot) => fns[slot].fn),
        onSend: inFastifyOrder(onSend).map((hook) => hook.fn),
        onError: onError.map((slot) => fns[slot]).filter((h) => h.kind === 'onError').map((h) => h.fn),
        // The scopes' error handlers from the app down: the innermost answers first, and one
        // that throws hands its error to the scope around it.
        errorHandlers: onError.map((slot) => fns[slot]).filter((h) => h.kind === 'errorHandler').map((h) => h.fn),
        notFound: last('notFound'),
      };
      this.chains[number] = chain;
    }
    return chain;
  }

  /**
   * A request with hooks (or a refused one they must see), in Fastify's order. Hooks that
   * return no Promise (and `done`-style ones that call back at once) run on the spot, as the
   * handler does in `run()`, and their answer goes with the batch; the chain waits only where
   * a hook or the handler gives it a Promise. Then the answer goes to the core as a plain
   * result or, when the reply's code or headers were set, as a Response.
   */
  runHooked(id, route, ctx, number, refusal) {
    if (this.starred[route] === true) starParams(ctx);
    const chain = this.chain(number);
    const reply = new (this.replyOf[route] ?? this.app._Reply)(refusal ? refusal.status : this.app._statuses[route] ?? 200, this.app);
    reply._request = ctx;
    const refused = refusal ? refusalError(refusal) : null;
    const waited = this.continueHooked(id, route, ctx, chain, reply, refused, refusal, 0);
    if (waited !== undefined) waited.then(this.flushSoon, this.flushSoon);
  }

  /**
   * The chain from step `step` on (the `onRequest` hooks, then the `preHandler` ones, then the
   * handler: one step each): runs what answers at once, and returns a Promise (the rest) only
   * when something had to be waited for.
   */
  continueHooked(id, route, ctx, chain, reply, refused, refusal, step) {
    const before = chain.onRequest.length;
    const last = before + chain.preHandler.length;
    try {
      for (; step <= last && !reply.sent; step++) {
        // Fastify parses after the onRequest hooks, so preValidation and preHandler hooks see the parsed body.
        if (step === chain.parseAt && !refused && this.parsers.length !== 0 && ctx[BODY] === UNREAD) {
          const parsing = parseCustomBody(this.parsers, ctx);
          if (parsing !== undefined) {
            const at = step;
            return parsing.then(
              () => this.continueHooked(id, route, ctx, chain, reply, refused, refusal, at),
              (error) => this.recoverHooked(id, route, ctx, chain, reply, refused, refusal, error),
            );
          }
        }
        let value;
        if (step < before) value = callHookNow(chain.onRequest[step], 2, ctx, reply);
        else if (refused) throw refused;
        else if (step < last) value = callHookNow(chain.preHandler[step - before], 2, ctx, reply);
        else if (this.isSocket[route]) {
          // A WebSocket's handshake that its hooks let through, as @fastify/websocket's: 101
          // tells the core to upgrade it, and the handler runs once the socket is open, with
          // what the hooks set on this `ctx` (kept until the core says it opened or never will).
          reply.code(101);
          this.admitted.set(ctx[HANDSHAKE], ctx);
          value = undefined;
        } else {
          value = this.handlers[route](ctx, reply);
          // Fastify's callback style, `(request, reply) => { db.query((rows) => reply.send(rows)) }`:
          // a handler that takes the reply, returns nothing and has not sent yet is waited for.
          // (Sent at once as empty, its later send() threw from a timer and ended the process.)
          if (value === undefined && !reply.sent && this.takesReply[route]) {
            value = new Promise((resolve) => {
              reply._onSent = () => { reply._onSent = null; resolve(); };
            });
          }
        }
        if (isThenable(value)) {
          const next = step + 1;
          const settled = (result) => {
            if (next > last && !reply.sent) reply.send(result === reply ? undefined : result);
            // A hook's `done` called inside an AsyncLocalStorage's run: the rest runs there too.
            const context = value[DONE_CONTEXT];
            if (context) return context.runInAsyncScope(() => this.continueHooked(id, route, ctx, chain, reply, refused, refusal, next));
            return this.continueHooked(id, route, ctx, chain, reply, refused, refusal, next);
          };
          const failed = (error) => this.recoverHooked(id, route, ctx, chain, reply, refused, refusal, error);
          // A callback-style handler's Promise settles on send() already.
          if (reply._onSent !== null) return value.then(settled, failed);
          return this.answerOnSend(value, reply, ctx, settled, failed);
        }
        // `return reply.code(204)`: the reply itself is no payload.
        if (step === last && !reply.sent) reply.send(value === reply ? undefined : value);
        else if (step < last) {
          // A hook that called `done` at once: the rest of the chain runs where it called it.
          const context = takeDoneContext();
          if (context !== null) {
            const next = step + 1;
            return context.runInAsyncScope(() => this.continueHooked(id, route, ctx, chain, reply, refused, refusal, next));
          }
        }
      }
    } catch (error) {
      return this.recoverHooked(id, route, ctx, chain, reply, refused, refusal, error);
    }
    // `reply.callNotFound()`: answered as a request no route took (its scope's not-found handler).
    if (reply.payload === NOT_FOUND) {
      const notFound = { status: 404, problem: native.problemBody(404, 'No route matches this path.'), headers: [] };
      const error = refusalError(notFound);
      return this.recoverHooked(id, -1, ctx, chain, reply, error, notFound, error);
    }
    // `reply.send(error)`, in a hook or the handler: answered as if it had thrown (Fastify's).
    if (reply.payload instanceof Error) return this.recoverHooked(id, route, ctx, chain, reply, refused, refusal, reply.payload);
    // An admitted handshake sends no reply of its own: no onSend hook sees it (as in
    // @fastify/websocket); one a hook answered is a reply as any other.
    const admitted = this.isSocket[route] && reply.statusCode === 101;
    return this.sendHooked(id, route, ctx, chain, reply, reply.payload, admitted ? chain.onSend.length : 0);
  }

  /**
   * Waits for a hook's or handler's Promise, or for its `reply.send()`, whichever comes
   * first: Fastify answers on send, so `reply.send({ queued: true }); await work()` answers at
   * once, and a failure after the send is logged while the answer sent stands.
   */
  answerOnSend(promise, reply, ctx, settled, failed) {
    if (reply.sent) {
      // Sent before its first await.
      promise.then(undefined, (error) => handlerError(this.logger, ctx, 'a hook or the handler threw after the reply was sent', error));
      return settled(undefined);
    }
    let going = false;
    return new Promise((resolve) => {
      reply._onSent = () => {
        reply._onSent = null;
        going = true;
        resolve(settled(undefined));
      };
      promise.then(
        (result) => {
          reply._onSent = null;
          if (!going) resolve(settled(result));
        },
        (error) => {
          reply._onSent = null;
          if (!going) resolve(failed(error));
          else handlerError(this.logger, ctx, 'a hook or the handler threw after the reply was sent', error);
        },
      );
    });
  }

  /**
   * `onError` hooks, then what answers `error` (`recover`), then the `onSend` hooks; for an
   * `onSend` hook's own failure (`sending`, Fastify's onErrorHook path), the recovered answer
   * is sent as it is, so a hook that always throws cannot send the chain round again.
   */
  async recoverHooked(id, route, ctx, chain, reply, refused, refusal, error, sending = false) {
    // A thrown object that is no Error but says its status (@fastify/rate-limit's
    // errorResponseBuilder's) is the answer's body, as Fastify's default error handler sends
    // it (found by a probe: only its status was kept). An app's error handler still gets it.
    if (error !== refused && isStatusObject(error) && chain.errorHandlers.length === 0 && !sending) {
      reply.sent = false;
      reply.code(error.statusCode);
      reply.send(error);
      return this.sendHooked(id, route, ctx, chain, reply, reply.payload, 0);
    }
    // A refusal of the core's is an error to the onError hooks as Fastify's are, but for a
    // request no route takes: Fastify answers that 404 (and a method no route takes) without one.
    if (error !== refused || (refusal.status !== 404 && refusal.status !== 405)) {
      for (const hook of chain.onError) {
        try {
          await callHook(hook, [ctx, reply, error]);
        } catch (failure) {
          handlerError(this.logger, ctx, 'an onError hook threw', failure);
        }
      }
    }
    try {
      this.recover(error, refused, refusal, route, chain, ctx, reply);
      await reply.recovered;
    } catch (failure) {
      // The not-found handler's own failure is the app's error, as a handler's is in Fastify:
      // onError hooks and the error handler see it (it was a bare 500 that skipped them).
      if (reply._inNotFound) {
        reply._inNotFound = false;
        return this.recoverHooked(id, route, ctx, chain, reply, null, null, failure, sending);
      }
      return this.failHooked(id, ctx, failure);
    }
    if (sending) {
      this.answerWith(id, ctx, reply, reply.payload);
      return undefined;
    }
    return this.sendHooked(id, route, ctx, chain, reply, reply.payload, 0);
  }

  /**
   * The `onSend` hooks from `index` on (each may replace the payload), then the answer. One
   * that throws is recovered as a handler's failure is (`onError`, the error handler).
   */
  sendHooked(id, route, ctx, chain, reply, payload, index) {
    const failed = (failure) => this.recoverHooked(id, route, ctx, chain, reply, null, null, failure, true);
    try {
      for (; index < chain.onSend.length; index++) {
        const next = callHookNow(chain.onSend[index], 3, ctx, reply, payload);
        if (isThenable(next)) {
          const after = index + 1;
          return next.then(
            (value) => this.sendHooked(id, route, ctx, chain, reply, value === undefined ? payload : value, after),
            failed,
          );
        }
        if (next !== undefined) payload = next;
      }
    } catch (failure) {
      return failed(failure);
    }
    // A stream that fails before its first chunk is answered as the handler's failure: through
    // the scope's error handler, as Fastify's stream errors are, not around it. (That answer
    // comes after the stream's own flush: it flushes itself.)
    this.answerWith(id, ctx, reply, payload, (failure) => { failed(failure).finally(this.flushSoon); });
    return undefined;
  }

  /** A handler for errors (or the answer it gave) that failed: a bare 500. */
  failHooked(id, ctx, error) {
    settled(this.native, ctx, id);
    handlerError(this.logger, ctx, 'a hook threw', error);
    this.native.fail(id, error && error.name ? `${error.name} thrown by a hook` : 'a hook failed', true);
  }

  /**
   * What answers `error`: the scope's not-found handler (a 404 no route took), its error
   * handler, else the default — the core's own answer to a refusal, an `HttpError`'s problem,
   * or a bare 500 for anything else (logged). The reply starts over with the error's status;
   * `reply.recovered` settles once it is sent.
   */
  recover(error, refused, refusal, route, chain, ctx, reply) {
    const { logger } = this; // `native` here is the addon itself (problemJson, problemBody)
    // Only a status the app set (`reply.code(404); throw …`) answers for the error: a refused
    // request's reply starts at the refusal's, which a hook's crash must not take (a 404 with
    // the crash's message, unlogged: found on review).
    const before = reply._codeSet ? reply.statusCode : undefined;
    reply.sent = false;
    reply.payload = undefined;
    reply.code(statusOfError(error, before));
    const notFound = error === refused && refusal.status === 404 && route < 0 ? chain.notFound : null;
    if (notFound) {
      reply._inNotFound = true;
      reply.recovered = Promise.resolve(callHook(notFound, [ctx, reply])).then((value) => {
        reply._inNotFound = false;
        return this.sendRecovered(value, refused, refusal, ctx, reply);
      });
      return;
    }
    // A path no route takes is no error of the app's: without a not-found handler it gets the
    // core's answer, as Fastify's default not-found handler answers, never the error handler.
    if (error === refused && route < 0 && (refusal.status === 404 || refusal.status === 405)) {
      reply.recovered = undefined;
      this.answerError(error, refused, refusal, ctx, reply);
      return;
    }
    if (chain.errorHandlers.length > 0) {
      reply.recovered = this.handleError(chain.errorHandlers.length - 1, chain.errorHandlers, error, refused, refusal, ctx, reply);
      return;
    }
    reply.recovered = undefined;
    this.answerError(error, refused, refusal, ctx, reply);
  }

  /**
   * Error handler `index` of `handlers` answers `error`; one that throws hands what it threw
   * to the handler of the scope around it, and the app's to the default answer (Fastify's
   * rule for a handler that rethrows).
   */
  async handleError(index, handlers, error, refused, refusal, ctx, reply) {
    // The reply holds the status of the error being handled. An error the handler throws or
    // sends answers with its own status, or one the handler set: with the first error's 404
    // it went out as a 404 whose detail was the new error's message (`db password=…`), where
    // Fastify answers 500 (found by a probe).
    const calls = reply._codeCalls;
    const setHere = () => (reply._codeCalls !== calls ? reply.statusCode : null);
    let value;
    try {
      value = await callHook(handlers[index], [error, ctx, reply]);
    } catch (thrown) {
      const before = setHere();
      reply.sent = false;
      reply.payload = undefined;
      reply.code(statusOfError(thrown, before));
      if (index > 0) return this.handleError(index - 1, handlers, thrown, refused, refusal, ctx, reply);
      return this.answerError(thrown, refused, refusal, ctx, reply);
    }
    // `reply.send(error)` (or an error returned) hands it to the enclosing scope's error
    // handler, as Fastify does; at the root, to the default answer. It skipped them (found
    // by a probe: a plugin's handler passing on what it does not format).
    const passed = reply.sent ? reply.payload : value;
    if (index > 0 && passed instanceof Error) {
      const before = setHere();
      reply.sent = false;
      reply.payload = undefined;
      reply.code(statusOfError(passed, before));
      return this.handleError(index - 1, handlers, passed, refused, refusal, ctx, reply);
    }
    return this.sendRecovered(value, refused, refusal, ctx, reply, setHere);
  }

  /** What a not-found or error handler gave, sent unless it sent itself. `setHere`: the status
   * an error handler set itself, which an error it sends may answer with. */
  sendRecovered(value, refused, refusal, ctx, reply, setHere = () => reply.statusCode) {
    if (!reply.sent) reply.send(value);
    // `reply.send(error)`, Fastify's way back to the default answer for that error.
    if (reply.payload instanceof Error) this.answerError(reply.payload, refused, refusal, ctx, reply, setHere());
  }

  /** The default answer to `error`, sent on `reply`; `replyStatus`: the status it answers
   * with when it names none (a 500 when that is no error status either). */
  answerError(error, refused, refusal, ctx, reply, replyStatus = reply.statusCode) {
    const { logger } = this; // `native` here is the addon itself (problemJson, problemBody)
    reply.sent = false;
    reply.code(statusOfError(error, replyStatus));
    if (error === refused) {
      reply.headers(pairsToObject(refusal.headers)).type(native.problemJson()).send(refusal.problem);
    } else {
      const http = httpErrorOf(error, reply.statusCode);
      if (!http || http.status >= 500 && !(error instanceof HttpError)) handlerError(logger, ctx, 'the handler threw', error);
      if (http) reply.headers(http.headers || {}).type(native.problemJson()).send(native.problemBody(http.status, http.detail));
      else reply.type(native.problemJson()).send(native.problemBody(null, null));
    }
  }

  /** The chain's answer: the payload with the reply's status and headers when they were set. */
  answerWith(id, ctx, reply, payload, streamFailed = null) {
    const { native, logger, streams } = this;
    const read = madeJson(payload);
    if (read !== null) {
      read.then((whole) => this.answerWith(id, ctx, reply, whole, streamFailed), (error) => this.failHooked(id, ctx, error)).finally(this.flushSoon);
      return;
    }
    payload = webValue(payload);
    if (!reply._codeSet && reply._headers.length === 0) {
      answer(native, id, payload, ctx, logger, streams, streamFailed);
      return;
    }
    if (payload instanceof SentFile) {
      payload.headers = { ...pairsToObject(reply.flatHeaders()), ...payload.headers };
      payload.status = reply.statusCode;
      answer(native, id, payload, ctx, logger, streams, streamFailed);
      return;
    }
    if (payload instanceof Response || payload instanceof EventStream) {
      payload.headers = { ...pairsToObject(reply.flatHeaders()), ...payload.headers };
      if (payload instanceof EventStream && reply._codeSet && !payload.statusGiven) payload.status = reply.statusCode;
      answer(native, id, payload, ctx, logger, streams, streamFailed);
      return;
    }
    const headers = pairsToObject(reply.flatHeaders());
    if (payload === null) {
      // JSON's null, as a handler's `null` is without hooks: a Response's null body is none.
      const type = reply.hasHeader('content-type') ? undefined : 'application/json; charset=utf-8';
      answer(native, id, new Response('null', { status: reply.statusCode, headers, type }), ctx, logger, streams);
      return;
    }
    answer(native, id, new Response(payload === undefined ? null : payload, { status: reply.statusCode, headers }), ctx, logger, streams, streamFailed);
  }

  run(id, route, ctx) {
    const { native, logger, streams } = this;
    if (this.starred[route] === true) starParams(ctx);
    // Fastify's `(request, reply) => …`: a handler that takes a reply answers through one, as
    // a hooked route's does (its code, headers and `send()`). Decided when the route was
    // declared: reading `handler.length` here cost 15–22 ns a request (20M calls, one pinned
    // core, handlers of three shapes), an array read 2 ns.
    // A body a custom parser may read (app-wide `addContentTypeParser`, a route that declares
    // none) goes the hooked way, which waits for the parser before the handler.
    if (this.takesReply[route] || (this.parsers.length !== 0 && ctx[BODY] === UNREAD)) {
      this.runHooked(id, route, ctx, -1, null);
      return;
    }
    let result;
    try {
      result = this.handlers[route](ctx);
    } catch (error) {
      if (isStatusObject(error)) answer(native, id, new Response(error, { status: error.statusCode }), ctx, logger, streams);
      else failWith(native, id, error, ctx, logger);
      return;
    }
    if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
      result.then(
        (value) => { answer(native, id, value, ctx, logger, streams); this.flushSoon(); },
        (error) => {
          // A thrown answer (see `recoverHooked`), as on a route with hooks.
          if (isStatusObject(error)) answer(native, id, new Response(error, { status: error.statusCode }), ctx, logger, streams);
          else failWith(native, id, error, ctx, logger);
          this.flushSoon();
        },
      );
    } else {
      answer(native, id, result, ctx, logger, streams);
    }
  }
}

const INJECT_OPTIONS = ['method', 'url', 'path', 'query', 'headers', 'cookies', 'payload', 'body'];

/** `inject()`'s options → the request the core gets: `{ method, url, headers: [name, value, …], body }`. */
function injectRequest(options) {
  if (typeof options === 'string') options = { url: options };
  if (options === null || typeof options !== 'object') throw new TypeError('ferrule: inject takes a URL or an options object');
  checkOptions(options, INJECT_OPTIONS, 'inject option');
  const method = String(options.method || 'GET').toUpperCase();
  let url = String(options.url ?? options.path ?? '/');
  const absolute = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  const authority = absolute ? new URL(url).host : 'localhost:80';
  if (absolute) {
    const parsed = new URL(url);
    url = parsed.pathname + parsed.search;
  }
  // What a URL may not hold as it is (a space, non-ASCII, `"<>\^`{|}`) is percent-encoded,
  // as light-my-request's URL parsing does; a fragment is never sent.
  url = url.replace(/#.*$/s, '').replace(/[^\x21-\x7e]+|["<>\\^`{|}]+/g, (run) => encodeURI(run.toWellFormed()));
  if (options.query !== undefined) {
    const extra = typeof options.query === 'string' ? options.query : querystringOf(options.query);
    if (extra) url += (url.includes('?') ? '&' : '?') + extra;
  }
  const headers = [];
  const given = new Set();
  for (const [name, value] of Object.entries(options.headers || {})) {
    if (value === undefined) continue;
    given.add(name.toLowerCase());
    for (const one of Array.isArray(value) ? value : [value]) headers.push(name.toLowerCase(), String(one));
  }
  let payload = options.payload !== undefined ? options.payload : options.body;
  let body = Buffer.alloc(0);
  if (payload !== undefined && payload !== null) {
    if (Buffer.isBuffer(payload)) body = payload;
    else if (ArrayBuffer.isView(payload)) body = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    else if (typeof payload === 'string') body = Buffer.from(payload);
    else {
      body = Buffer.from(JSON.stringify(payload));
      if (!given.has('content-type')) headers.push('content-type', 'application/json');
    }
  }
  if (!given.has('host')) headers.push('host', authority);
  if (!given.has('user-agent')) headers.push('user-agent', 'lightMyRequest');
  if (options.cookies && !given.has('cookie')) {
    const cookie = Object.entries(options.cookies).map(([name, value]) => `${name}=${value}`).join('; ');
    if (cookie) headers.push('cookie', cookie);
  }
  if ((body.length > 0 || ['POST', 'PUT', 'PATCH'].includes(method)) && !given.has('content-length')) headers.push('content-length', String(body.length));
  return { method, url, headers, body };
}

/** `{ a: 1, tag: ['x', 'y'] }` → `a=1&tag=x&tag=y`. */
function querystringOf(query) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) params.append(name, String(one));
  }
  return params.toString();
}

/**
 * The answer to an injected request, in light-my-request's shape (Fastify's `inject`), and
 * `cutOff`: the body broke off before its end (a stream whose producer threw).
 */
function injectResponse(status, flat, rawPayload, cutOff) {
  const headers = {};
  for (let i = 0; i < flat.length; i += 2) {
    const [name, value] = [flat[i], flat[i + 1]];
    // A repeated name is an array of its values, as light-my-request reads Node's headers
    // (`reply.header('x-m', ['1', '2'])`); joined, it told a test other than the wire.
    if (name === 'set-cookie') (headers[name] ||= []).push(value);
    else headers[name] = name in headers ? [].concat(headers[name], value) : value;
  }
  const payload = rawPayload.toString('utf8');
  return {
    statusCode: status,
    statusMessage: require('node:http').STATUS_CODES[status] || '',
    headers,
    rawHeaders: flat,
    rawPayload,
    payload,
    body: payload,
    json() { return JSON.parse(payload); },
    cookies: (headers['set-cookie'] || []).map(parseSetCookie),
    cutOff,
  };
}

/** `a=1; Path=/; HttpOnly` → `{ name: 'a', value: '1', path: '/', httpOnly: true }`. */
function parseSetCookie(line) {
  const [first, ...attributes] = line.split(';');
  const at = first.indexOf('=');
  const cookie = { name: first.slice(0, at).trim(), value: first.slice(at + 1).trim() };
  for (const attribute of attributes) {
    const [key, ...rest] = attribute.trim().split('=');
    const value = rest.join('=');
    const name = { 'max-age': 'maxAge', httponly: 'httpOnly', samesite: 'sameSite' }[key.toLowerCase()] || key.toLowerCase();
    cookie[name] = value === '' ? true : name === 'maxAge' ? Number(value) : value;
  }
  return cookie;
}

/** What every `ctx` has already: `decorateRequest` refuses these names. */
const CONTEXT_FIELDS = ['method', 'path', 'params', 'query', 'headers', 'cookies', 'body', 'requestId', 'signal', 'header'];
/** Of those, the ones a hook may set (`ctx.cookies = parsed`), as a plugin's hook does. */
const SETTABLE_FIELDS = ['params', 'query', 'headers', 'cookies', 'body'];

const ID = Symbol('ferrule.id');
const NATIVE = Symbol('ferrule.native');
const SIGNAL = Symbol('ferrule.signal');
const RAW = Symbol('ferrule.raw');
const RAW_REQUEST = Symbol('ferrule.rawRequest');
const HEADERS = Symbol('ferrule.headers');
const COOKIES = Symbol('ferrule.cookies');
const DECLARED_HEADERS = Symbol('ferrule.declaredHeaders');
const QUERY = Symbol('ferrule.query');
const BODY = Symbol('ferrule.body');
const DECLARES = Symbol('ferrule.declares');
const UNREAD = Symbol('ferrule.unread');
const FLAGS = Symbol('ferrule.flags');
const ROUTE = Symbol('ferrule.route');
const ROUTE_OPTIONS_OF = Symbol('ferrule.routeOptionsOf');
const APP = Symbol('ferrule.app');
const HANDSHAKE = Symbol('ferrule.handshake');
const DECLARES_QUERY = 1;
const DECLARES_BODY = 2;
/** Set once `query` has left out the declared parameters that were not sent (`Context.query`). */
const QUERY_CHECKED = 4;
/** The declared query as the core typed it, absent parameters `null`, once `query` left them out. */
const DECLARED_QUERY = Symbol('ferrule.declaredQuery');
/** By route, the names its query schema declares, where the query keeps undeclared ones too. */
const QUERY_NAMES = Symbol('ferrule.queryNames');

/** What a route's spec declares, as `Context` reads it: `DECLARES_QUERY | DECLARES_BODY`. */
function declaresOf(spec) {
  return (spec.query?.length ? DECLARES_QUERY : 0) | (spec.body ? DECLARES_BODY : 0);
}

const PROTOTYPE_KEY = new Error('a prototype key');

/** `JSON.parse`'s reviver for `refusePrototypeKeys`. */
function refusingPrototypeKeys(key, value) {
  if (key === '__proto__' || (key === 'constructor' && value !== null && typeof value === 'object' && Object.hasOwn(value, 'prototype'))) throw PROTOTYPE_KEY;
  return value;
}

/** `[[name, value], …]` → `{ name: value }`, a repeated name's values in an array (Fastify's querystring). */
function queryObject(pairs) {
  const query = {};
  for (const [name, value] of pairs) {
    if (!Object.hasOwn(query, name)) ownProperty(query, name, value);
    else if (Array.isArray(query[name])) query[name].push(value);
    else query[name] = [query[name], value];
  }
  return query;
}

/**
 * An undeclared body, parsed by its content type as Fastify's default parsers do; with
 * `refusePrototypeKeys` (the default, Fastify's `onProtoPoisoning: 'error'`), a JSON body with
 * a `__proto__` key, or a `constructor` holding a `prototype`, is a 400, as a declared one is.
 */
/** `type/subtype` of a content type, lower-case, without its parameters. */
function mediaType(contentType) {
  return contentType.split(';', 1)[0].trim().toLowerCase();
}

/** The types Fastify parses itself, which a `'*'` parser does not take (nor `hasContentTypeParser` deny). */
const BUILT_IN_TYPES = ['application/json', 'text/plain'];

/**
 * The parser `addContentTypeParser` declared for `contentType`: by media type, then RegExp,
 * then `'*'` for a type that is not one of `BUILT_IN_TYPES` (found by a probe: a `'*'` parser
 * took JSON bodies, which Fastify's own JSON parser keeps).
 */
function parserFor(parsers, contentType) {
  const essence = mediaType(contentType);
  let any = null;
  let pattern = null;
  for (const parser of parsers) {
    if (parser.type === essence) return parser;
    if (parser.type === '*') any ??= parser;
    else if (parser.type instanceof RegExp && pattern === null && parser.type.test(essence)) pattern = parser;
  }
  return pattern ?? (BUILT_IN_TYPES.includes(essence) ? null : any);
}

/** A parser's failure: its own status, else a 400 (the body is what it could not read). */
function parseFailure(error) {
  if (error instanceof Error) {
    if (error.statusCode === undefined) error.statusCode = 400;
    return error;
  }
  return new HttpError(400, `The body could not be parsed: ${String(error)}`);
}

/**
 * Runs the custom parser for `ctx`'s body, if one takes its content type, setting the body it
 * gives: nothing to wait for when it answers at once (or none takes it), else a Promise.
 */
function parseCustomBody(parsers, ctx) {
  const contentType = ctx.header('content-type');
  if (contentType === undefined) return undefined;
  const parser = parserFor(parsers, contentType);
  if (parser === null) return undefined;
  const raw = ctx.rawBody;
  // No body (a GET sent with a content type) is none to parse, as in Fastify.
  if (raw.length === 0) return undefined;
  if (parser.bodyLimit !== undefined && raw.length > parser.bodyLimit) {
    throw new HttpError(413, `The body is larger than this content type's limit of ${parser.bodyLimit} bytes.`);
  }
  let payload;
  if (parser.parseAs === 'string') payload = raw.toString('utf8');
  else if (parser.parseAs === 'buffer') payload = raw;
  else payload = bodyStream(raw);
  let settled = false;
  let failure;
  let body;
  let later = null;
  const done = (error, value) => {
    if (settled) return;
    settled = true;
    if (later !== null) later(error, value);
    else [failure, body] = [error, value];
  };
  let returned;
  try {
    returned = parser.fn.length >= 3 ? parser.fn(ctx, payload, done) : parser.fn(ctx, payload);
  } catch (error) {
    throw parseFailure(error);
  }
  if (isThenable(returned)) returned.then((value) => done(null, value), (error) => done(error ?? new Error('the parser rejected')));
  else if (parser.fn.length < 3) done(null, returned);
  if (settled) {
    if (failure) throw parseFailure(failure);
    ctx[BODY] = body;
    return undefined;
  }
  return new Promise((resolve, reject) => {
    later = (error, value) => {
      if (error) return reject(parseFailure(error));
      ctx[BODY] = value;
      return resolve();
    };
  });
}

function parsedBody(raw, contentType = '', refusePrototypeKeys = true, method = 'POST') {
  const essence = contentType.split(';', 1)[0].trim().toLowerCase();
  if (raw.length === 0) {
    // Fastify's JSON parser refuses an empty body its type says is JSON (FST_ERR_CTP_EMPTY_JSON_BODY);
    // a GET or HEAD has no body to parse. Found by a probe: the handler got undefined.
    if (essence === 'application/json' && method !== 'GET' && method !== 'HEAD') {
      throw new HttpError(400, "The body cannot be empty when its content-type is 'application/json'.");
    }
    // Fastify's text parser gives an empty body as ''.
    if (essence.startsWith('text/') && method !== 'GET' && method !== 'HEAD') return '';
    return undefined;
  }
  if (essence === 'application/json' || essence.endsWith('+json')) {
    let parsed;
    try {
      parsed = refusePrototypeKeys ? JSON.parse(raw.toString('utf8'), refusingPrototypeKeys) : JSON.parse(raw.toString('utf8'));
    } catch (error) {
      if (error === PROTOTYPE_KEY) throw new HttpError(400, 'The body has a key that could change an object\'s prototype (__proto__, or constructor.prototype).');
      throw new HttpError(400, `The body is not valid JSON: ${error.message}`);
    }
    return parsed;
  }
  if (essence.startsWith('text/')) return raw.toString('utf8');
  if (essence === 'application/x-www-form-urlencoded') return queryObject(new URLSearchParams(raw.toString('utf8')));
  return raw;
}
const DECLARED_COOKIES = Symbol('ferrule.declaredCookies');

/**
 * What a request carried as sent, declared or not — fetched from the core on first use (one
 * native call), so handlers that never read it pay nothing. Read it before answering.
 */
function rawParts(ctx) {
  if (ctx[RAW] === undefined) ctx[RAW] = ctx[NATIVE].rawParts(ctx[ID]) || [Buffer.alloc(0), '', [], [], []];
  return ctx[RAW];
}

/** What a trusted proxy said about `ctx`'s request: `[scheme, host]` (each null when unsaid), or null. */
function forwardedOf(ctx) {
  // An app that trusts no proxy (Node's default) has nothing to ask: `ctx.host` stays the one
  // native call it was. Until something fetched every raw part, one small call, as `header()`.
  if (!ctx[APP]._trustsProxies) return null;
  return ctx[RAW] === undefined ? ctx[NATIVE].forwarded(ctx[ID]) : ctx[RAW][7];
}

/** `name` set on `object` as its own property, even `__proto__` (a header name a client may send). */
function ownProperty(object, name, value) {
  if (name === '__proto__') Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
  else object[name] = value;
}

/** `values` without its `null` members (declared parameters that were not sent); itself when it has none. */
function withoutAbsent(values) {
  for (const name in values) {
    if (values[name] === null) {
      const present = {};
      for (const key in values) if (values[key] !== null) ownProperty(present, key, values[key]);
      return present;
    }
  }
  return values;
}

/** `target` with `declared`'s members that were sent (not `null`) put over its own, as typed. */
function assignPresent(target, declared) {
  for (const name in declared) if (declared[name] !== null) ownProperty(target, name, declared[name]);
  return target;
}

/** `[name, value, …]` → `{ name: value }`, a repeated name's values joined with ", " (as `header()` joins them). */
function joinedHeaders(flat) {
  const headers = {};
  for (let i = 0; i < flat.length; i += 2) {
    const name = flat[i];
    ownProperty(headers, name, Object.hasOwn(headers, name) ? `${headers[name]}, ${flat[i + 1]}` : flat[i + 1]);
  }
  return headers;
}

/** `[name, value, name, value, …]` → `[[name, value], …]`. */
function pairsOf(flat) {
  const pairs = [];
  for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i], flat[i + 1]]);
  return pairs;
}

/** The methods the addon sends as their index here (`METHODS` in to_js.rs, same order). */
const METHOD_BY_INDEX = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'CONNECT', 'TRACE'];

/**
 * The abort controllers of the requests whose handlers read `ctx.signal`, by request id, per
 * native app: a `[-7, id]` entry (the client left) aborts and forgets one. An entry whose
 * request was answered first stays until its id is reused: as many as requests ever ran at once.
 */
const DEPARTURES = Symbol('ferrule.departures');
function departuresOf(native) {
  return native[DEPARTURES] ??= new Map();
}

/**
 * `ctx` is answered (its id goes back to the addon, for another request): a signal read from
 * now on watches nothing of that id's, and its watch, if any, is forgotten.
 */
function settled(native, ctx, id) {
  if (ctx === undefined || ctx === null || ctx[ANSWERED]) return;
  ctx[ANSWERED] = true;
  const left = ctx[LEFT];
  if (left !== undefined) {
    const departures = departuresOf(native);
    if (departures.get(id) === left) departures.delete(id);
  }
}

/** AbortSignal.any (Node 20.3): either signal's abort, with its reason. */
function anySignal(a, b) {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([a, b]);
  const both = new AbortController();
  for (const one of [a, b]) {
    if (one.aborted) both.abort(one.reason);
    else one.addEventListener('abort', () => both.abort(one.reason), { once: true });
  }
  return both.signal;
}

/** Request `id`'s client left: its `ctx.signal` aborts. */
function departed(native, id) {
  const departures = departuresOf(native);
  const left = departures.get(id);
  if (left) {
    departures.delete(id);
    left.abort(clientLeft(left));
  }
}

const DEADLINE_AT = Symbol('ferrule.deadlineAt');
const ANSWERED = Symbol('ferrule.answered');
const LEFT = Symbol('ferrule.left');

/**
 * The reason a request's `signal` aborts with when the core let go of it: its client closed
 * the connection, or (from a millisecond before its deadline on) the core answered 504.
 */
function clientLeft(left) {
  if (performance.now() >= left[DEADLINE_AT] - 1) return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
  return new DOMException('The client closed the connection before the response was sent', 'AbortError');
}

/**
 * What a handler receives (`Context` in index.d.ts). `signal` aborts when the request's client
 * leaves before its answer (an `AbortError`), and at the request's deadline, when the core
 * answers 504 (a `TimeoutError`): an async handler hands it to fetch, timers or streams and
 * stops work nobody waits for. Made on first read only (two native calls, and a timer with a
 * deadline), so handlers that never read it pay nothing.
 */
class Context {
  constructor(native, batch, i) {
    // A method from the table and empty objects made here cost less than made in the addon.
    const method = batch[i + 2];
    this.method = typeof method === 'number' ? METHOD_BY_INDEX[method] : method;
    this.path = batch[i + 3];
    const declares = this[DECLARES][batch[i + 1]] ?? DECLARES_QUERY | DECLARES_BODY;
    this[FLAGS] = declares;
    this[ROUTE] = batch[i + 1];
    this.params = batch[i + 4] ?? {};
    // What the route declares no schema for is read from the request as sent, on first use.
    this[QUERY] = batch[i + 5] ?? (declares & DECLARES_QUERY ? {} : undefined);
    this[DECLARED_HEADERS] = batch[i + 6] ?? {};
    this[DECLARED_COOKIES] = batch[i + 7] ?? {};
    this[HEADERS] = undefined;
    this[COOKIES] = undefined;
    this[BODY] = declares & DECLARES_BODY ? batch[i + 8] : UNREAD;
    this.requestId = batch[i + 9];
    this[ID] = batch[i];
    this[NATIVE] = native;
    this[SIGNAL] = undefined;
    this[RAW] = undefined;
  }

  /**
   * Every header as sent, under lower-case names (repeated ones joined with ", "), the declared
   * ones coerced as their schema says: Fastify's `request.headers`. Made on first read (one
   * native call), so a handler that never reads it pays nothing.
   */
  get headers() {
    if (this[HEADERS] === undefined) this[HEADERS] = assignPresent(joinedHeaders(this.rawHeaders), this[DECLARED_HEADERS]);
    return this[HEADERS];
  }

  set headers(value) { this[HEADERS] = value; }

  /** Every cookie as sent (the first of a repeated name, as the `cookie` package reads them), the declared ones coerced. */
  get cookies() {
    if (this[COOKIES] === undefined) {
      const every = {};
      for (const [name, value] of this.cookiePairs) if (!Object.hasOwn(every, name)) ownProperty(every, name, value);
      this[COOKIES] = assignPresent(every, this[DECLARED_COOKIES]);
    }
    return this[COOKIES];
  }

  set cookies(value) { this[COOKIES] = value; }

  /**
   * The query: as its schema coerced it, or without one, every parameter as sent (Fastify's
   * `request.query`: strings, a repeated name's values in an array).
   */
  get query() {
    const query = this[QUERY];
    if (query === undefined) return (this[QUERY] = queryObject(this.queryPairs));
    // A declared parameter that was not sent is no key, as in Fastify, so a default in
    // `const { sort = 'name' } = ctx.query` applies (found by a probe: it was a null key).
    if ((this[FLAGS] & (DECLARES_QUERY | QUERY_CHECKED)) === DECLARES_QUERY) {
      this[FLAGS] |= QUERY_CHECKED;
      const present = withoutAbsent(query);
      if (present !== query) {
        this[DECLARED_QUERY] = query;
        this[QUERY] = present;
      }
      return present;
    }
    return query;
  }

  set query(value) {
    this[QUERY] = value;
    this[FLAGS] |= QUERY_CHECKED;
  }

  /**
   * The body: as its schema validated it, or without one, parsed as Fastify's own parsers do
   * (JSON by its content type, text as a string, a url-encoded form as an object; any other
   * type a Buffer; no body: undefined). A JSON body that does not parse is a 400.
   */
  get body() {
    if (this[BODY] === UNREAD) {
      // A body a content-type parser takes is not read yet before preValidation, as in
      // Fastify's onRequest: read here, the default reading would stand in for the parser's
      // (found by a probe: a CSV body reached the handler as text).
      const parsers = this[APP]._parsers;
      if (parsers !== undefined && parsers.length !== 0) {
        const contentType = this.header('content-type');
        if (contentType !== undefined && parserFor(parsers, contentType) !== null) return undefined;
      }
      this[BODY] = parsedBody(this.rawBody, this.header('content-type'), this[APP]._refusePrototypeKeys, this.method);
    }
    return this[BODY];
  }

  set body(value) { this[BODY] = value; }

  /**
   * Fastify's `request.routeOptions`: the route's `method`, `url` as declared, `config` and
   * `schema`; for a request no route took, the request's method, no `url`, an empty `config`
   * and no `schema`, as Fastify's not-found route gives them. Found by a probe: it was
   * undefined there, so an auth hook reading `routeOptions.config.public` answered every
   * unknown path with a 500.
   */
  get routeOptions() { return this[ROUTE_OPTIONS_OF][this[ROUTE]] ?? unroutedOptions(this.method); }

  /** Fastify's `request.log`: the app's logger (see `App.log`). */
  get log() { return this[APP].log; }

  /** Only what a query schema declared, coerced (`{}` without one). */
  get declaredQuery() {
    if (!(this[FLAGS] & DECLARES_QUERY)) return {};
    // Read first: `query` is what keeps the typed object aside when it leaves members out.
    const query = this.query;
    const typed = this[DECLARED_QUERY] ?? query;
    // The parameters the schema does not declare, which `query` keeps as sent, are left out.
    const names = this[QUERY_NAMES][this[ROUTE]];
    if (names === undefined) return typed;
    const declared = {};
    for (const name of names) if (Object.hasOwn(typed, name)) ownProperty(declared, name, typed[name]);
    return declared;
  }

  /** Only a body a schema declared, validated (undefined without one). */
  get declaredBody() { return this[FLAGS] & DECLARES_BODY ? this.body : undefined; }

  /** Only the declared headers, as their schema coerced them. */
  get declaredHeaders() { return this[DECLARED_HEADERS]; }

  /** Only the declared cookies, as their schema coerced them. */
  get declaredCookies() { return this[DECLARED_COOKIES]; }

  /** The path and query as sent (Fastify's `request.url`). */
  get url() {
    const query = this.rawQuery;
    return query === '' ? this.path : `${this.path}?${query}`;
  }

  /**
   * The host the client asked for (Fastify's `request.host`): the `Host` header, or a trusted
   * proxy's `X-Forwarded-Host` (`trustProxy`); undefined without either.
   */
  get host() { return forwardedOf(this)?.[1] ?? this.header('host'); }

  /** The host without its port (Fastify's `request.hostname`). */
  get hostname() {
    const host = this.host;
    if (host === undefined) return undefined;
    if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1) || host;
    const colon = host.lastIndexOf(':');
    return colon === -1 ? host : host.slice(0, colon);
  }

  /** The port the `Host` header names (Fastify's `request.port`); null when it names none. */
  get port() {
    const host = this.host;
    if (host === undefined) return null;
    const port = /:(\d+)$/.exec(host);
    return port === null ? null : Number(port[1]);
  }

  /** The URL as sent (Fastify's `request.originalUrl`): `url`, which no handler rewrites here. */
  get originalUrl() { return this.url; }

  /** Whether no route took the request (Fastify's `request.is404`): true in a not-found handler. */
  get is404() { return this[ROUTE_OPTIONS_OF][this[ROUTE]] === undefined; }

  /**
   * 'http' (the server speaks no TLS), or what a trusted proxy's `X-Forwarded-Proto` says
   * ('https' behind one that ended TLS; `trustProxy`), as Fastify's `request.protocol`.
   */
  get protocol() { return forwardedOf(this)?.[0] ?? 'http'; }

  /** The request id (Fastify's `request.id`), as `requestId`. */
  get id() { return this.requestId; }

  /** The app (Fastify's `request.server`). */
  get server() { return this[APP]; }

  /**
   * Fastify's `request.raw` (Node's `IncomingMessage`), as far as the core hands a request
   * over: `method`, `url`, `headers` and `socket.remoteAddress`/`remotePort`,
   * made when first read. The body is the core's: `ctx.body` or `ctx.rawBody`.
   */
  get raw() {
    // Made once: plugins keep their own values on it (@fastify/accepts caches its parser there).
    if (this[RAW_REQUEST] === undefined) {
      this[RAW_REQUEST] = { method: this.method, url: this.url, headers: this.headers, socket: { remoteAddress: this.ip, remotePort: this.remotePort } };
    }
    return this[RAW_REQUEST];
  }

  /** The body as sent (a Buffer, empty when none was kept), on any route within the body limit. */
  get rawBody() { return rawParts(this)[0]; }

  /** The query string as sent (percent-encoded, without `?`). */
  get rawQuery() { return rawParts(this)[1]; }

  /** Every query parameter as `[name, value]` pairs, declared or not, decoded, in order. */
  get queryPairs() { return pairsOf(rawParts(this)[2]); }

  /** Every header as `[name, value, …]` (lower-case names), as Node's `req.rawHeaders`. */
  get rawHeaders() { return rawParts(this)[3]; }

  /** Any header by name, declared or not; repeated ones joined with ", " (undefined: absent). */
  header(name) {
    const wanted = String(name).toLowerCase();
    // Until something fetched every raw part, one header is one small native call.
    if (this[RAW] === undefined) return this[NATIVE].header(this[ID], wanted);
    const flat = this.rawHeaders;
    const values = [];
    for (let i = 0; i < flat.length; i += 2) if (flat[i] === wanted) values.push(flat[i + 1]);
    return values.length === 0 ? undefined : values.join(', ');
  }

  /** Every cookie as `[name, value]` pairs, declared or not, in order. */
  get cookiePairs() { return pairsOf(rawParts(this)[4]); }

  /** The caller's W3C `traceparent`, validated (undefined when absent or invalid), to send on. */
  get traceparent() { return rawParts(this)[5]?.[0] ?? undefined; }

  /** The W3C trace id (32 hex digits) of the caller's `traceparent`. */
  get traceId() { return rawParts(this)[5]?.[1] ?? undefined; }

  /**
   * The address of the client that sent the request (Fastify's `request.ip`): the peer, or the
   * client a trusted proxy's `X-Forwarded-For` names (`trustProxy`); '127.0.0.1' for
   * `inject()`, as Fastify's.
   */
  get ip() { return rawParts(this)[6]?.[0] ?? undefined; }

  /** The peer's port (Node's `req.socket.remotePort`); 0 for `inject()`. */
  get remotePort() { return rawParts(this)[6]?.[1] ?? undefined; }

  get signal() {
    if (this[SIGNAL] === undefined) {
      const native = this[NATIVE], id = this[ID];
      const left = new AbortController();
      this[LEFT] = left;
      if (this[ANSWERED]) {
        // Read after the answer (in a stream's producer): its id may be another request's
        // now. It aborts when the stream's client leaves (`Streams.release`), if it streams.
        left[DEADLINE_AT] = Infinity;
        this[SIGNAL] = left.signal;
        return this[SIGNAL];
      }
      const ms = native.remainingMs(id);
      // The core's 504 lets go of the request too: a departure at the deadline is the timeout.
      left[DEADLINE_AT] = ms === null ? Infinity : performance.now() + ms;
      if (native.watchDeparture(id)) left.abort(clientLeft(left));
      else departuresOf(native).set(id, left);
      this[SIGNAL] = ms === null ? left.signal : anySignal(left.signal, AbortSignal.timeout(Math.ceil(ms)));
    }
    return this[SIGNAL];
  }
}

// An app's own Context class gets its routes' tables (`App` constructor); this one has none.
Context.prototype[DECLARES] = [];
Context.prototype[QUERY_NAMES] = [];
Context.prototype[ROUTE_OPTIONS_OF] = [];
Context.prototype[APP] = { log: logFacade(null), _refusePrototypeKeys: true };

/** What a `ctx` is made with; the rest of its own properties its hooks set (`ctx.user = …`). */
const MADE_FIELDS = new Set(['method', 'path', 'params', 'requestId']);

/**
 * What a WebSocket's hooks set on its handshake's `ctx`, on its socket's: @fastify/websocket
 * hands the handler the request its hooks saw. The socket's `ctx` is made anew (its handshake's
 * request parts belong to a request answered since).
 */
function carryOver(kept, ctx) {
  if (kept === undefined) return;
  for (const key of Object.keys(kept)) if (!MADE_FIELDS.has(key)) ctx[key] = kept[key];
}

/**
 * A WebSocket handler's `ctx`: the request's validated values. The connection has no pending
 * request in the addon, so what it carried as sent is not kept (declare the headers, query
 * parameters and cookies the handler reads), and it has no deadline.
 */
function socketContext(native, batch, i, ContextClass = Context) {
  const ctx = new ContextClass(native, batch, i);
  // Its raw parts came with it (after the context's ten entries): the request is gone.
  ctx[RAW] = batch[i + 10];
  ctx[SIGNAL] = new AbortController().signal;
  return ctx;
}

/** The fetch API's Response (Node's global), which a handler may return beside ferrule's. */
const WebResponse = globalThis.Response;

/**
 * A web platform value a handler returned, as ferrule's `Response`: the fetch API's Response
 * (a proxied `await fetch(…)`, or one made without importing ferrule's) with its status,
 * headers and body streamed — fetch has already decoded a fetched body, so the coding it
 * arrived in is dropped — and a Blob as its bytes with its type. Anything else as it is.
 */
function webValue(value) {
  if (value === null || typeof value !== 'object') return value;
  if (typeof WebResponse === 'function' && value instanceof WebResponse) return new Response(value.body, { status: value.status, headers: webHeaders(value) });
  if (typeof Blob === 'function' && value instanceof Blob) return new Response(value.stream(), { type: value.type || undefined });
  return value;
}

/** A fetch API Response's headers as ferrule's take them. */
function webHeaders(value) {
  const headers = {};
  // fetch() decodes what it fetched: the coding is gone, and with it the length it gave.
  const decoded = value.url && value.headers.has('content-encoding');
  for (const [name, header] of value.headers) {
    if (value.url && name === 'content-encoding') continue;
    if (decoded && name === 'content-length') continue;
    headers[name] = name in headers ? [].concat(headers[name], header) : header;
  }
  return headers;
}

/**
 * A fetch API Response with a JSON body that the handler made (`Response.json(user)`), not
 * fetched (a fetched one has a `url`, and is passed through as it streams): a Promise of it as
 * ferrule's Response with its bytes read whole, so that the route's response schema filters
 * them as it does any JSON the handler wrote. Null for anything else.
 */
function madeJson(value) {
  if (typeof WebResponse !== 'function' || !(value instanceof WebResponse) || value.url || value.body === null || value.bodyUsed) return null;
  if (!/^application\/(?:[^;]*\+)?json\s*(?:;|$)/i.test(value.headers.get('content-type') || '')) return null;
  return value.arrayBuffer().then((bytes) => new Response(Buffer.from(bytes), { status: value.status, headers: webHeaders(value) }));
}

/**
 * Sends what a handler gave. `streamFailed(error)`, when given, answers a byte stream that fails
 * before its first chunk (a hooked route's error handling); without it that is a bare failure.
 */
function answer(native, id, value, ctx, logger, streams, streamFailed = null) {
  const read = madeJson(value);
  if (read !== null) {
    read.then(
      (whole) => answer(native, id, whole, ctx, logger, streams, streamFailed),
      (error) => {
        handlerError(logger, ctx, "the handler's Response body cannot be read", error);
        native.fail(id, 'returned a Response whose body cannot be read');
      },
    ).finally(streams.flushSoon);
    return;
  }
  settled(native, ctx, id);
  try {
    value = webValue(value);
    if (value instanceof EventStream) {
      streams.start(id, iteratorOf(value.source), true, ctx, statusOf(value.status), flatHeaders(value.headers), value.keepAlive);
      return;
    }
    if (value instanceof SentFile) {
      native.replyFile(id, value.status === null ? null : statusOf(value.status), flatHeaders(value.headers), value.path);
      return;
    }
    if (value instanceof Response) {
      const headers = flatHeaders(value.headers);
      if (value.type) headers.push('content-type', String(value.type));
      const iterator = streamed(value.body) ? iteratorOf(value.body) : null;
      if (iterator) streams.start(id, iterator, false, ctx, statusOf(value.status), headers, undefined, streamFailed);
      else native.replyResponse(id, statusOf(value.status), headers, value.body === undefined ? null : value.body);
      return;
    }
    if (streamed(value)) {
      streams.start(id, iteratorOf(value), false, ctx, null, [], undefined, streamFailed);
      return;
    }
    const refused = unsendable(value);
    if (refused) {
      handlerError(logger, ctx, `returned ${refused}, which cannot be sent`);
      native.fail(id, `returned ${refused}`);
      return;
    }
    if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value)) {
      // Flattened here, where the walk is a plain JavaScript call; the addon writes the JSON.
      let flat;
      try {
        flat = native.serialise(value);
      } catch (error) {
        // A cycle, or a toJSON() that threw: the same 500 and log line as from the addon.
        native.fail(id, `returned a value that cannot be sent: ${typeof error?.message === 'string' ? error.message : 'an exception'}`);
        return;
      }
      if (flat !== null) {
        native.replyTape(id, flat[0], flat[1], flat[2]);
        return;
      }
    }
    native.reply(id, value);
  } catch (error) {
    // Unanswered, the request would wait for its timeout; thrown from a Promise callback,
    // this would be an unhandled rejection, which ends the process.
    handlerError(logger, ctx, "the handler's result cannot be sent", error);
    native.fail(id, 'returned a value that cannot be sent');
  }
}

/**
 * Whether a returned value is a stream to send chunk by chunk: a Readable, a Web
 * ReadableStream, an async iterator or generator, or a generator. (Arrays, Maps and strings
 * are iterable too, but are values: they are sent as JSON or text.)
 */
function streamed(value) {
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return false;
  return typeof value[Symbol.asyncIterator] === 'function' || typeof value.getReader === 'function'
    || (typeof value.next === 'function' && typeof value[Symbol.iterator] === 'function');
}

/** What a plain return value is, when it has no JSON form: a function. */
function unsendable(value) {
  if (typeof value === 'function') return `a function (${value.name || 'anonymous'})`;
  return null;
}

/**
 * The streams being sent, by the id the core pulls them with. Each producer runs as its own
 * loop (`run`): every item is pushed to the core at once (`streamPush`), which hands it to the
 * pull that waits or keeps it for the next pull, which takes everything kept in one crossing.
 * When 64 items (64 KiB) wait for the client, the loop waits until a pull has taken them (the
 * core reports each pull as `[-1, id]` in a dispatch batch), so a producer runs at most that
 * far ahead of its client and nothing ready is held back. A client that leaves (`[-2, id]`)
 * closes the iterator (`return()`: a generator's `finally` runs, a Readable is destroyed).
 */
class Streams {
  constructor(native, logger, flushSoon) {
    this.native = native;
    this.logger = logger;
    this.flushSoon = flushSoon;
    this.open = new Map();
    this.nextId = 0;
  }

  start(requestId, iterator, events, ctx, status, headers, keepAlive = undefined, failedEarly = null) {
    // A generator's body runs after the response has started, when the request is no longer
    // pending in the addon: what it carried as sent (`ctx.header()`, `ctx.rawBody`) is kept now.
    rawParts(ctx);
    // Closing it runs its code (a generator's `finally`) in the context it was started in.
    const stream = { iterator, events, ctx, keepAlive, room: null, scope: new AsyncResource('ferrule.stream') };
    if (events) {
      this.begin(requestId, stream, status, headers, undefined);
      return;
    }
    // A byte stream's head goes with its first chunk, as Node's http sends it: one that fails
    // before it is the handler's failure (a 500, its error handler), as in Fastify, not a 200
    // cut off (found by a Fastify port). An event stream's head goes at once (a browser's
    // EventSource opens on it).
    // One given up meanwhile (its deadline's 504, its client gone) is only logged: no error
    // handler answers a request that has its answer (found on review).
    const failed = (error) => {
      if (failedEarly && this.native.wanted(requestId)) failedEarly(error);
      else failWith(this.native, requestId, error, ctx, this.logger);
    };
    // A first chunk that cannot be sent fails before the head too (a producer yielding an
    // object: found by a README probe, a 200 cut off).
    const start = (step) => {
      if (step.done || isChunk(step.value)) {
        this.begin(requestId, stream, status, headers, step);
        return;
      }
      this.close(stream);
      failed(new TypeError(`ferrule: produced a chunk that cannot be sent: ${kindOf(step.value)} (chunks are strings or Buffers)`));
    };
    let first;
    try {
      first = iterator.next();
    } catch (error) {
      failed(error);
      return;
    }
    if (!isThenable(first)) {
      start(first);
      return;
    }
    first.then(
      (step) => {
        if (!this.native.wanted(requestId)) {
          // Given up meanwhile (its deadline's 504, or its client left): close the producer.
          this.close(stream);
          return;
        }
        start(step);
      },
      failed,
    ).finally(this.flushSoon);
  }

  /** The stream's head goes out; its items follow, `first` (already made) first. */
  begin(requestId, stream, status, headers, first) {
    const id = this.nextId++;
    this.open.set(id, stream);
    this.native.replyStream(requestId, status, headers, id, stream.events, stream.keepAlive);
    this.run(id, stream, first);
  }

  async run(id, stream, first) {
    try {
      for (;;) {
        let step = first === undefined ? stream.iterator.next() : first;
        first = undefined;
        if (step !== null && typeof step === 'object' && typeof step.then === 'function') step = await step;
        if (!this.open.has(id)) return; // the client left while the item was made
        if (step.done) break;
        const room = this.push(id, stream, step.value);
        this.flushSoon();
        if (!room) {
          if (!this.open.has(id)) return;
          await new Promise((resolve) => { stream.room = resolve; });
          if (!this.open.has(id)) return;
        }
      }
      this.open.delete(id);
      this.native.streamEnd(id);
    } catch (error) {
      if (!this.open.has(id)) return;
      this.open.delete(id);
      handlerError(this.logger, stream.ctx, 'the stream threw', error);
      this.native.streamFail(id, error && error.name ? `${error.name} thrown by the stream` : 'the stream failed');
      this.close(stream);
    }
    this.flushSoon();
  }

  /** Hands one item to the core; whether the producer may go on without waiting. */
  push(id, stream, value) {
    const native = this.native;
    if (!stream.events) {
      const chunk = ArrayBuffer.isView(value) && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value;
      return nativeCall(() => native.streamPush(id, chunk));
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      // A key that is no event field is refused by name (the core's list), not dropped.
      for (const key in value) {
        if (!EVENT_FIELDS.has(key)) throw new TypeError(`ferrule: ${unknownEventField(key)}`);
      }
      const { data, event: name, id: eventId, retry, comment } = value;
      return nativeCall(() => native.streamPushEvent(id, data === undefined ? null : data, name === undefined ? null : String(name),
        eventId === undefined ? null : String(eventId), typeof retry === 'number' ? retry : null, comment === undefined ? null : String(comment)));
    }
    return nativeCall(() => native.streamPushEvent(id, value === undefined ? null : value, null, null, null, null));
  }

  /** The core took (or waits for) what the stream pushed: a producer waiting for room goes on. */
  pulled(id) {
    const stream = this.open.get(id);
    if (stream && stream.room) {
      const resume = stream.room;
      stream.room = null;
      resume();
    }
  }

  release(id) {
    const stream = this.open.get(id);
    if (!stream) return;
    this.open.delete(id);
    if (stream.room) stream.room();
    // Its client left: what the producer waits on with `ctx.signal` stops too.
    const left = stream.ctx?.[LEFT];
    if (left !== undefined && !left.signal.aborted) left.abort(clientLeft(left));
    this.close(stream);
  }

  close(stream) {
    if (typeof stream.iterator.return !== 'function') return;
    stream.scope.runInAsyncScope(this.closeNow, this, stream);
  }

  closeNow(stream) {
    try {
      const closed = stream.iterator.return();
      if (closed && typeof closed.then === 'function') closed.then(undefined, (error) => handlerError(this.logger, stream.ctx, 'closing the stream threw', error));
    } catch (error) {
      handlerError(this.logger, stream.ctx, 'closing the stream threw', error);
    }
  }
}

/** Whether a byte stream may send `value` as a chunk: what `streamPush` takes. */
function isChunk(value) {
  return typeof value === 'string' || ArrayBuffer.isView(value);
}

/** A value's kind, as `streamPush` names one it refuses. */
function kindOf(value) {
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/** The status an error answers with: its own (`statusCode`, `status`), else 500. */
/**
 * The status an error answers with: its own `statusCode` (or `status`) in 400–599, else the
 * reply's when a hook or handler set one in that range before failing (`reply.code(404); throw
 * …`, `reply.code(409).send(error)`: Fastify's rule), else 500.
 */
function statusOfError(error, replyStatus) {
  const status = error !== null && typeof error === 'object' ? error.statusCode ?? error.status : undefined;
  if (isErrorStatus(status)) return status;
  return isErrorStatus(replyStatus) ? replyStatus : 500;
}

/** A plain object (no Error) with a `statusCode` of 400–599: an answer thrown, as Fastify plugins throw one. */
function isStatusObject(value) {
  return value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype && isErrorStatus(value.statusCode);
}

function isErrorStatus(status) {
  return Number.isInteger(status) && status >= 400 && status <= 599;
}

/**
 * The problem an error answers with when it says its status: an `HttpError`, or any error
 * with a `statusCode` (or `status`) in 400–599 — what `http-errors` and `@fastify/error` make,
 * and what Fastify and Express answer with. Its message is the detail for a 4xx (meant for
 * the client, as `http-errors`' `expose`); a 5xx's stays in the log. Null for any other error.
 */
function httpErrorOf(error, replyStatus) {
  if (error instanceof HttpError) return { status: statusOf(error.status), detail: error.detail === undefined ? null : String(error.detail), headers: error.headers };
  // A plain object thrown with a status is one too (`throw { statusCode: 400, message }`).
  if (error === null || typeof error !== 'object') return null;
  const status = statusOfError(error, replyStatus);
  if (status === 500 && !isErrorStatus(error.statusCode ?? error.status)) return null;
  const headers = error.headers !== null && typeof error.headers === 'object' ? error.headers : undefined;
  return { status, detail: status < 500 && error.message ? String(error.message) : null, headers };
}

/** `[name, value, …]` → `{ name: value | [values] }`. */
function pairsToObject(flat) {
  const object = {};
  for (let i = 0; i < flat.length; i += 2) {
    const [name, value] = [flat[i], flat[i + 1]];
    object[name] = name in object ? [].concat(object[name], value) : value;
  }
  return object;
}

/** The error a refused request is thrown as: an `HttpError` with the problem's status and
 * detail, `statusCode`, `validation` (its errors) for a 422, and `problem`, the core's answer. */
function refusalError(refusal) {
  const problem = JSON.parse(refusal.problem.toString('utf8'));
  const error = new HttpError(refusal.status, problem.detail, { headers: pairsToObject(refusal.headers) });
  error.problem = problem;
  if (Array.isArray(problem.errors)) error.validation = problem.errors;
  return error;
}

/** A status as given; the core refuses anything that is not a whole number in 200-599. */
function statusOf(status) {
  return typeof status === 'number' ? status : NaN;
}

/** A handler's failure for the server's log: the `logger` (with the error as pino's `err`), or stderr. */
function handlerError(logger, ctx, what, error) {
  // A handler that stopped with its own signal's reason did what it was asked: its client
  // left, or the core answered 504 (and logged it).
  if (error !== undefined && ctx && error === ctx[SIGNAL]?.reason) return;
  const message = `${ctx.method} ${ctx.path}: ${what.startsWith('returned') ? `the handler ${what}` : what}`;
  if (logger) emitLog(logger, 'error', 'ferrule::handler', message, error === undefined ? {} : { err: error });
  else if (error === undefined) console.error(`ferrule: ${message}`);
  else console.error(`ferrule: ${message}:`, error);
}

function failWith(native, id, error, ctx, logger) {
  settled(native, ctx, id);
  const http = httpErrorOf(error);
  if (http) {
    if (http.status >= 500 && !(error instanceof HttpError)) handlerError(logger, ctx, 'the handler threw', error);
    try {
      native.failHttp(id, http.status, http.detail, flatHeaders(http.headers));
    } catch (unreadable) {
      handlerError(logger, ctx, "the handler's HttpError cannot be sent", unreadable);
      native.fail(id, 'threw an HttpError whose headers cannot be read', true);
    }
    return;
  }
  // The server's log gets the stack; the client gets a bare 500.
  handlerError(logger, ctx, 'the handler threw', error);
  native.fail(id, error && error.name ? `${error.name} thrown` : 'a non-Error value thrown', true);
}

/** The primary process of `listen({ workers })`: forks, forwards signals, waits. */
function supervise(host, port, workers, handleSignals) {
  // Bound here, once: a port in use fails now, in the primary, and the workers inherit this
  // one socket (as descriptor INHERITED_FD) instead of each binding the port with
  // SO_REUSEPORT, which would let them share it with any other program that does the same.
  const fd = nativeCall(() => native.bindListener(host, port));
  cluster.setupPrimary({ stdio: ['inherit', 'inherit', 'inherit', 'ipc', fd] });
  // The workers not yet exited, counted here: `cluster.workers` drops one only once its IPC
  // channel has closed too, which can come after its 'exit' (1 time in 100 under load here,
  // always while a child the worker started holds the channel), so the last 'exit' would
  // find it still listed and the primary would wait forever.
  const live = new Set();
  const fork = () => live.add(cluster.fork({ FERRULE_LISTEN_FD: String(INHERITED_FD) }).id);
  return new Promise((resolve, reject) => {
    let stopping = false;
    let failed = null;
    // Workers that have served: one that exits before (its onReady threw, its app did not
    // load) would fail the same way again, so the app stops instead of forking it forever.
    const served = new Set();
    for (let i = 0; i < workers; i++) fork();
    // A worker that died is replaced a second later; a stop in that second cancels it (else
    // the replacement, forked after the stop, would hold the primary open with no one to stop it).
    const respawns = new Set();
    const settleOnceNoneLive = () => {
      if (live.size > 0) return;
      require('node:fs').closeSync(fd);
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
      if (failed) reject(failed);
      else resolve({ workers });
    };
    const stop = () => {
      if (stopping) return;
      stopping = true;
      for (const timer of respawns) clearTimeout(timer);
      respawns.clear();
      for (const worker of Object.values(cluster.workers)) if (live.has(worker.id)) worker.process.kill('SIGTERM');
      // Every worker had died and its replacement was not forked yet: no 'exit' is to come.
      settleOnceNoneLive();
    };
    if (handleSignals) {
      // \`on\`, as in listen(): a repeated signal must not kill the primary mid-drain.
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    }
    cluster.on('message', (worker, message) => {
      if (message && message.ferrule === 'serving') served.add(worker.id);
      if (message && message.ferrule === 'failed' && !stopping) {
        failed = new Error(`${message.message} (worker ${worker.process.pid}); stopping every worker`);
        stop();
      }
    });
    cluster.on('exit', (worker, code, signal) => {
      live.delete(worker.id);
      // Its end of a channel a child of the worker still holds would keep the primary alive.
      if (worker.isConnected()) worker.process.disconnect();
      if (!stopping && served.has(worker.id)) {
        console.error(`ferrule: worker ${worker.process.pid} exited (${signal || code}); starting another`);
        const timer = setTimeout(() => { respawns.delete(timer); if (!stopping) fork(); }, 1000);
        respawns.add(timer);
        return;
      }
      if (stopping) {
        settleOnceNoneLive();
        return;
      }
      failed = new Error(`ferrule: startup failed: worker ${worker.process.pid} exited (${signal || code}) before it served; stopping every worker`);
      stop();
    });
  });
}

module.exports = {
  App,
  cors,
  compress,
  Response,
  HttpError,
  EventStream,
  sse,
  WebSocket,
  version: native.version,
  problemJson: native.problemJson,
};
