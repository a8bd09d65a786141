/**
 * Ferrule for Node.js: a Rust HTTP core (axum + tokio) with JavaScript handlers.
 *
 * Path parameters are typed from the template: `'/users/{id:int}'` gives `params.id: number`.
 */

/** The types a path template's `{name:type}` can declare. */
interface PathTypes {
  int: number;
  float: number;
  bool: boolean;
  str: string;
  uuid: string;
  date: string;
  datetime: string;
  path: string;
}

type ParamType<T extends string> = T extends keyof PathTypes ? PathTypes[T] : string;

type Param<S extends string> = S extends `${infer Name}:${infer Type}`
  ? { [K in Name]: ParamType<Type> }
  : { [K in S]: string };

/** `'/a/{x:int}/b/{y}'` → `{ x: number } & { y: string }`; Express's `'/a/:x'` → `{ x: string }`. */
export type PathParams<Path extends string> = BracedParams<Path> & ColonParams<Path>;

type BracedParams<Path extends string> = Path extends `${string}{${infer P}}${infer Rest}`
  ? Param<P> & BracedParams<Rest>
  : {};

/** Express-style `:name` segments, a string each. */
type ColonParams<Path extends string> = Path extends `${string}/:${infer Segment}`
  ? Segment extends `${infer Name}/${infer Rest}`
    ? { [K in Name]: string } & ColonParams<`/${Rest}`>
    : { [K in Segment]: string }
  : {};

/** An uploaded file of a multipart body, bytes kept exactly as sent. */
export interface UploadedFile {
  field: string;
  filename: string | null;
  contentType: string | null;
  size: number;
  data: Buffer;
  /** Every header of the file's part, names in lower case. */
  headers: Record<string, string>;
}

/** `app.log` and `request.log`: pino's levels. */
export interface LogFacade {
  fatal(...args: unknown[]): void;
  error(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  info(...args: unknown[]): void;
  debug(...args: unknown[]): void;
  trace(...args: unknown[]): void;
  child(bindings?: Record<string, unknown>): LogFacade;
}

/** What a handler receives: everything already parsed, coerced and validated by the core. */
export interface Context<Path extends string = string, Body = any, Query = Record<string, any>> {
  method: string;
  /** The path as sent (percent-encoded). */
  path: string;
  params: PathParams<Path>;
  query: Query;
  /** Every header as sent (Fastify's `request.headers`), lower-case names, the declared ones coerced by their schema. */
  headers: Record<string, any>;
  /** Every cookie as sent, the declared ones coerced by their schema. */
  cookies: Record<string, any>;
  /** Only what a query schema declared, coerced (`{}` without one). */
  readonly declaredQuery: Record<string, any>;
  /** Only a body a schema declared, validated (undefined without one). */
  readonly declaredBody: unknown;
  /** Only the declared headers, as their schema coerced them. */
  readonly declaredHeaders: Record<string, any>;
  /** Only the declared cookies, as their schema coerced them. */
  readonly declaredCookies: Record<string, any>;
  /** The path and query as sent (Fastify's `request.url`). */
  readonly url: string;
  /** The `Host` header (Fastify's `request.host`), and without its port (`hostname`). */
  readonly host: string | undefined;
  readonly hostname: string | undefined;
  /** The port the `Host` header names (Fastify's `request.port`), else null. */
  readonly port: number | null;
  /** Fastify's `request.originalUrl`: the URL as sent. */
  readonly originalUrl: string;
  /** Fastify's `request.is404`: no route took the request. */
  readonly is404: boolean;
  /** 'http' (the server speaks no TLS), or what a trusted proxy's X-Forwarded-Proto says (`trustProxy`). */
  readonly protocol: 'http' | 'https';
  /** Fastify's `request.id`: the request id, as `requestId`. */
  readonly id: string | null;
  /**
   * Fastify's `request.routeOptions`: the route's method and url as declared, its `config` and
   * its `schema` (when no route took the request: its method, an empty `config`, no url or schema).
   */
  readonly routeOptions: { readonly method: string; readonly url: string | undefined; readonly config: Readonly<Record<string, unknown>>; readonly schema: Readonly<Record<string, unknown>> | undefined };
  /** Fastify's `request.log`: the app's logger. */
  readonly log: LogFacade;
  /**
   * JSON as parsed (schema defaults filled in), form fields (files as UploadedFile), Buffer,
   * string, or undefined. Without a body schema, parsed as Fastify's default parsers parse it
   * (JSON by its content type, a 400 when it does not parse; text; a url-encoded form).
   */
  body: Body;
  requestId: string | null;
  /**
   * Aborts when the client closes the connection before the response is sent (reason: an
   * `AbortError` DOMException) and at the request's deadline (`timeout`), when the client gets
   * 504 (a `TimeoutError`): pass it to fetch, timers or streams so work nobody waits for stops.
   * A synchronous handler holds the thread and cannot be interrupted.
   */
  readonly signal: AbortSignal;
  /** The body as sent (empty when none was kept), on any route within the body limit. */
  readonly rawBody: Buffer;
  /** The query string as sent (percent-encoded, without `?`). */
  readonly rawQuery: string;
  /** Every query parameter as `[name, value]` pairs, declared or not, decoded, in order. */
  readonly queryPairs: Array<[string, string]>;
  /** Every header as `[name, value, …]` (lower-case names), as Node's `req.rawHeaders`. */
  readonly rawHeaders: string[];
  /** Every cookie as `[name, value]` pairs, declared or not, in order. */
  readonly cookiePairs: Array<[string, string]>;
  /** The caller's W3C `traceparent`, validated (undefined when absent or invalid). */
  readonly traceparent: string | undefined;
  /** The W3C trace id (32 hex digits) of the caller's `traceparent`. */
  readonly traceId: string | undefined;
  /** The peer that sent the request (Fastify's `request.ip`): the client, or the last proxy; '127.0.0.1' for `inject()`. */
  readonly ip: string | undefined;
  /** The peer's port; 0 for `inject()`. */
  readonly remotePort: number | undefined;
  /** The app (Fastify's `request.server`). */
  readonly server: App;
  /** Node's `IncomingMessage` names (Fastify's `request.raw`): the body is `body`/`rawBody`. */
  readonly raw: { method: string; url: string; headers: Record<string, string | string[]>; socket: { remoteAddress: string | undefined; remotePort: number | undefined } };
  /** Any header by name, declared or not; repeated ones joined with ", ". */
  header(name: string): string | undefined;
}

/** Anything JSON-serialisable (Dates and objects with toJSON included). */
export type Json = unknown;

/** A chunk of a streamed response. */
export type Chunk = string | Buffer | Uint8Array;
/** What streams chunk by chunk: a Readable, a Web ReadableStream, an async iterator or generator, a generator. */
export type ChunkSource = AsyncIterable<Chunk> | Iterator<Chunk> | ReadableStream<Uint8Array> | NodeJS.ReadableStream;
export type HandlerResult = Json | string | Buffer | Response | EventStream | ChunkSource | null | undefined;

/**
 * Fastify's route generic, `app.get<{ Querystring: Q; Body: B; Params: P; Headers: H }>(…)`:
 * the types the route's schemas describe, for its handler's `ctx`. Each one given replaces
 * what is inferred (`params` from the template) or assumed (`any`).
 */
export interface RouteGeneric {
  Params?: unknown;
  Querystring?: unknown;
  Body?: unknown;
  Headers?: unknown;
  /** Taken for Fastify's sake; a handler may return anything JSON can hold. */
  Reply?: unknown;
}

/** `G[K]` when the route generic gives it, else `Default`. */
type Given<G, K extends keyof RouteGeneric, Default> = G extends { [key in K]-?: infer T } ? T : Default;

/** A route's `ctx`: a Context with the route generic's types in place. */
export type RouteContext<Path extends string = string, G extends RouteGeneric = {}> =
  Omit<Context<Path, Given<G, 'Body', any>, Given<G, 'Querystring', Record<string, any>>>, 'params' | 'headers'> & {
    params: Given<G, 'Params', PathParams<Path>>;
    headers: Given<G, 'Headers', Record<string, any>>;
  };

/** A handler that takes a second parameter gets Fastify's `reply` (its code, headers, `send()`). */
export type Handler<Path extends string = string, G extends RouteGeneric = {}> = (ctx: RouteContext<Path, G>, reply: Reply) => HandlerResult | Reply | Promise<HandlerResult | Reply>;

/** A JSON Schema (2020-12) object. */
export type Schema = Record<string, unknown>;

/** The core's CORS settings. */
export interface CorsOptions {
  allow_origins?: string[];
  /** Origins matched whole by this expression (Rust's regex syntax), besides those listed. */
  allow_origin_regex?: string;
  allow_methods?: string[];
  allow_headers?: string[];
  expose_headers?: string[];
  allow_credentials?: boolean;
  allow_private_network?: boolean;
  max_age_secs?: number;
  /** A preflight's status, 200 to 299; 200 when not given. */
  preflight_status?: number;
}

/** @fastify/cors's options, with its defaults; a RegExp origin passes an origin it `test`s. */
export interface FastifyCorsOptions {
  origin?: boolean | string | RegExp | Array<string | RegExp>;
  methods?: string | string[];
  allowedHeaders?: string | string[];
  exposedHeaders?: string | string[];
  credentials?: boolean;
  maxAge?: number;
  /** A preflight's status, 200 to 299; 204 when not given. */
  optionsSuccessStatus?: number;
}

export interface CompressionOptions {
  enabled?: boolean;
  min_size?: number;
  gzip?: boolean;
  br?: boolean;
  zstd?: boolean;
  /** Each coding's level on its own scale (gzip 1-9, brotli 0-11, zstd 1-22). */
  level?: number;
}

export interface RouteOptions {
  /** A JSON body's schema. */
  body?: Schema;
  /** A url-encoded form's object schema. */
  form?: Schema;
  /** A multipart form's object schema; `format: 'binary'` fields are files. */
  multipart?: Schema;
  /** Object schemas of the query string, headers and cookies. */
  query?: Schema;
  headers?: Schema;
  cookies?: Schema;
  /** Extra constraints on path parameters. */
  params?: Schema;
  bodyRequired?: boolean;
  maxFileSize?: number;
  /** Status of plain (non-Response) return values. */
  status?: number;
  cors?: CorsOptions | FastifyCorsOptions | true;
  compression?: CompressionOptions;
  bodyLimit?: number;
  timeout?: number;
  /** The operation in the OpenAPI document: one-line summary, Markdown description, tags, id. */
  summary?: string;
  description?: string;
  tags?: string[];
  operationId?: string;
  deprecated?: boolean;
  /** Leave the route out of the OpenAPI document. */
  hide?: boolean;
  /**
   * The operation's OpenAPI security requirements (`[{ bearerAuth: [] }]`), naming the app's
   * `securitySchemes`; `[]` says it needs none. Documented only: a hook checks the credentials.
   */
  security?: SecurityRequirement[];
  /** Fastify's route `config`: the route's own values, for hooks (`ctx.routeOptions.config`). */
  config?: Record<string, unknown>;
  /** The route's own hooks (a function or a list), run after the app's and its scope's, for this route only. */
  onRequest?: RouteHook | RouteHook[];
  preParsing?: RouteHook | RouteHook[];
  preValidation?: RouteHook | RouteHook[];
  preHandler?: RouteHook | RouteHook[];
  preSerialization?: SendHook | SendHook[];
  onSend?: SendHook | SendHook[];
  onError?: ErrorHook | ErrorHook[];
  /**
   * What the route answers, by status (`200`, `'2xx'`, `'default'`), as Fastify declares it: a
   * JSON result sent with that status keeps only the properties its schema declares.
   */
  response?: Record<string | number, Schema>;
  /** Fastify's shape: the same schemas as `body`, `query` (`querystring`), `params`, `headers`, and the document's fields. */
  schema?: {
    body?: Schema; querystring?: Schema; query?: Schema; params?: Schema; headers?: Schema;
    response?: Record<string | number, Schema>;
    summary?: string; description?: string; tags?: string[]; operationId?: string; deprecated?: boolean; hide?: boolean;
    security?: SecurityRequirement[];
  };
}

/** A hook before the handler (`onRequest`, `preParsing`, `preValidation`, `preHandler`): `reply.send()` answers instead of the handler. */
export type RouteHook = (ctx: Context, reply: Reply, done: (error?: Error) => void) => unknown;
/** An `onSend` (or `preSerialization`) hook: returns (or passes to `done`) the payload to send. */
export type SendHook = (ctx: Context, reply: Reply, payload: unknown, done: (error?: Error | null, payload?: unknown) => void) => unknown;
/** An `onError` hook: sees what a hook or the handler threw, and a request the core refused (a 400, 413, 415 or 422; not a 404). */
export type ErrorHook = (ctx: Context, reply: Reply, error: Error, done: () => void) => unknown;

/** A content-type parser: calls `done(error, body)` or returns the body (or a Promise of it). */
export type ContentTypeParser<Payload> = (ctx: Context, payload: Payload, done: (error: Error | null, body?: unknown) => void) => unknown;

/** An OpenAPI security requirement: scheme names, each with the OAuth2 scopes it needs. */
export type SecurityRequirement = Record<string, string[]>;

export interface AppOptions {
  bodyLimit?: number;
  cors?: CorsOptions | FastifyCorsOptions | true;
  compression?: CompressionOptions;
  /** The hosts the app answers for: `'example.com'`, `'*.example.com'` (any host under it), `'*'`;
   * a request whose Host names another is a 400 before any hook (default: every host). */
  allowedHosts?: string[] | null;
  /** With allowedHosts: a request for `example.com` where `www.example.com` is listed is redirected
   * there, 307 (default true). */
  wwwRedirect?: boolean;
  /**
   * Fastify's `trustProxy`: the proxies whose X-Forwarded-For, -Proto and -Host are believed for
   * `ip`, `protocol` and `host`: `true` (every peer), or addresses, networks ('10.0.0.0/8') and
   * 'loopback', 'linklocal', 'uniquelocal', as a list or a comma-separated string. Default: none.
   */
  trustProxy?: boolean | string | string[];
  /** The core's name for `trustProxy`'s list. */
  trustedProxies?: string[];
  requestId?: boolean;
  timeout?: number;
  maxHeaderBytes?: number;
  shutdownTimeout?: number;
  /** Milliseconds a client may take to send a request head (default 30000; 0: off) → 408. */
  headerReadTimeout?: number;
  /** Longest pause in a request body, and grace before minBodyRate applies, in ms (default 30000) → 408. */
  bodyReadTimeout?: number;
  /** Bytes per second a body must average after bodyReadTimeout (default 240; 0: off). */
  minBodyRate?: number;
  /** Milliseconds a keep-alive connection may wait for its next request (default 75000). */
  keepAliveTimeout?: number;
  /** Milliseconds a response may wait for the client to read before the connection is closed (default 60000; 0: off). */
  sendTimeout?: number;
  /** Most connections at once, also capped by the descriptor limit (default 16384). */
  maxConnections?: number;
  /** Requests waiting for JavaScript beyond which the core answers 503 (default 1024). */
  maxQueuedRequests?: number;
  /** HTTP/2 streams per connection (default 200). */
  http2MaxConcurrentStreams?: number;
  /** HTTP/2 keep-alive ping interval in ms (default 30000; 0: off). */
  http2KeepAliveInterval?: number;
  /** Milliseconds an event stream may be quiet before a keep-alive comment is sent (default 15000; 0: off). */
  sseKeepAlive?: number;
  /** Largest WebSocket message a client may send, in bytes (default 16 MiB) → close 1009. */
  wsMaxMessageBytes?: number;
  /** Bytes a WebSocket client may leave unread (default 1 MiB) → close 1008. */
  wsSendBufferBytes?: number;
  /** Milliseconds a WebSocket may be silent before a ping; twice that without a pong → close 1001 (default 60000; 0: off). */
  wsIdleTimeout?: number;
  /** Deepest nesting in a JSON body, 1 to 127 (default 127). */
  maxJsonDepth?: number;
  /** A JSON body with a `__proto__` key, or a `constructor` holding a `prototype`, is a 422 (default true). */
  refusePrototypeKeys?: boolean;
  /** A path no route takes, whose twin with the trailing slash added or taken away is routed, is
   * answered 307 to that twin (Starlette's redirect; default false, a 404 as in Fastify). */
  redirectSlashes?: boolean;
  /** Fastify's spelling of `refusePrototypeKeys`: 'error' (the default) or 'ignore'. */
  onProtoPoisoning?: 'error' | 'ignore';
  /** Fastify's: while `close()` runs the app's `preClose` hooks and then drains, a new request
   * is answered 503 with `connection: close` (default true); false serves it as usual. */
  return503OnClosing?: boolean;
  /** Most parts in a multipart body (default 1000). */
  maxMultipartParts?: number;
  /** Largest header block of a multipart part (default 8192). */
  maxPartHeaderBytes?: number;
  /** Longest multipart file name in bytes (default 255). */
  maxFilenameBytes?: number;
  /** The OpenAPI document's `info` (default title 'Ferrule', version '0.1.0'). */
  title?: string;
  version?: string;
  description?: string;
  /** The OpenAPI document's `servers` and `tags`. */
  servers?: Array<{ url: string; description?: string }>;
  openapiTags?: Array<{ name: string; description?: string }>;
  /** The document's `components.securitySchemes` (`{ bearerAuth: { type: 'http', scheme: 'bearer' } }`), for routes' `security`. */
  securitySchemes?: Record<string, { type: 'apiKey' | 'http' | 'oauth2' | 'openIdConnect' | 'mutualTLS'; [field: string]: unknown }>;
  /** Where the OpenAPI document is served (default '/openapi.json'); null serves none. */
  openapiUrl?: string | null;
  /** Where the docs page (Swagger UI, served from the core's own copy) is served (default '/docs'); null serves none, nor does an openapiUrl of null. */
  docsUrl?: string | null;
  /** Where Prometheus metrics are served in the OpenMetrics text format (default: not served). */
  metricsUrl?: string | null;
  /** A log record per request (method, path, status, bytes, duration_ms, request_id); default false. */
  accessLog?: boolean;
  /** Development: a JSON result its declared `response` schema forbids becomes a 500 listing what is wrong (default false). */
  validateResponses?: boolean;
  /** Records below this level are not logged (default 'info'). */
  logLevel?: LogLevel;
  /**
   * Where records go: true (default), `ferrule: …` lines on stderr; false, nowhere; a
   * pino-compatible logger (pino, Fastify's `app.log`), called as `logger[level]({ target, ...fields }, message)`.
   */
  logger?: boolean | Logger;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'off';

/** What `logger` needs: pino's level methods (`debug` is optional). */
export interface Logger {
  error(fields: Record<string, unknown>, message: string): unknown;
  warn(fields: Record<string, unknown>, message: string): unknown;
  info(fields: Record<string, unknown>, message: string): unknown;
  debug?(fields: Record<string, unknown>, message: string): unknown;
}

export interface ListenOptions {
  host?: string;
  port?: number;
  /** Processes sharing the port (node:cluster); the primary resolves when all have exited. */
  workers?: number;
  /** Runtime threads (default: the CPUs this process may use). */
  threads?: number;
  /** Close gracefully on SIGINT/SIGTERM (default true). */
  handleSignals?: boolean;
  /** Print the startup line (default true). */
  log?: boolean;
}

/** Where the app listens: `{ host, port }`, and its URL as `url` and wherever a string is wanted. */
export interface Listening {
  host: string;
  port: number;
  readonly url: string;
  toString(): string;
}

export declare class App {
  constructor(options?: AppOptions);
  route<G extends RouteGeneric = {}, P extends string = string>(method: string | string[], path: P, handler: Handler<P, G>): this;
  route<G extends RouteGeneric = {}, P extends string = string>(method: string | string[], path: P, options: RouteOptions, handler: Handler<P, G>): this;
  /** Fastify's object form: `route({ method, url, handler, ...options })`. */
  route<G extends RouteGeneric = {}, P extends string = string>(definition: RouteOptions & { method: string | string[]; url: P; handler: Handler<P, G> }): this;
  /** Declares a route from an explicit core RouteSpec (routes described as data). */
  addRoute(spec: Record<string, unknown>, handler: Handler, options?: { status?: number }): this;
  /** The app's OpenAPI 3.1 document (every route declared so far), as served at `openapiUrl`. */
  openapi(): Record<string, any>;
  get<G extends RouteGeneric = {}, P extends string = string>(path: P, handler: Handler<P, G>): this;
  get<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions, handler: Handler<P, G>): this;
  get<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions & { handler: Handler<P, G> }): this;
  post<G extends RouteGeneric = {}, P extends string = string>(path: P, handler: Handler<P, G>): this;
  post<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions, handler: Handler<P, G>): this;
  post<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions & { handler: Handler<P, G> }): this;
  put<G extends RouteGeneric = {}, P extends string = string>(path: P, handler: Handler<P, G>): this;
  put<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions, handler: Handler<P, G>): this;
  put<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions & { handler: Handler<P, G> }): this;
  patch<G extends RouteGeneric = {}, P extends string = string>(path: P, handler: Handler<P, G>): this;
  patch<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions, handler: Handler<P, G>): this;
  patch<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions & { handler: Handler<P, G> }): this;
  delete<G extends RouteGeneric = {}, P extends string = string>(path: P, handler: Handler<P, G>): this;
  delete<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions, handler: Handler<P, G>): this;
  delete<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions & { handler: Handler<P, G> }): this;
  head<G extends RouteGeneric = {}, P extends string = string>(path: P, handler: Handler<P, G>): this;
  head<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions, handler: Handler<P, G>): this;
  head<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions & { handler: Handler<P, G> }): this;
  options<G extends RouteGeneric = {}, P extends string = string>(path: P, handler: Handler<P, G>): this;
  options<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions, handler: Handler<P, G>): this;
  /** Fastify's `all`: the route for every method. */
  all<G extends RouteGeneric = {}, P extends string = string>(path: P, handler: Handler<P, G>): this;
  all<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions, handler: Handler<P, G>): this;
  options<G extends RouteGeneric = {}, P extends string = string>(path: P, options: RouteOptions & { handler: Handler<P, G> }): this;
  /** A WebSocket route: parameters are validated and the onRequest and preHandler hooks run before the upgrade (a reply a hook sends refuses it); the handler gets the socket and the request's values, with what the hooks set on their `ctx`. */
  ws<P extends string>(path: P, handler: SocketHandler<P>): this;
  ws<P extends string>(path: P, options: SocketOptions, handler: SocketHandler<P>): this;
  /** The port being served, while listening. */
  readonly port: number | null;
  listen(options?: ListenOptions): Promise<Listening | { workers: number }>;
  listen(port: number, host?: string): Promise<Listening | { workers: number }>;
  /** Called back once listening (or with the error), as Fastify's and Express's listen; in the
   * primary of `listen({ workers })`, once every worker has exited, with no address. */
  listen(options: ListenOptions | number, callback: (error: Error | null, address?: string) => void): Promise<Listening | { workers: number }>;
  listen(port: number, host: string, callback: (error: Error | null, address?: string) => void): Promise<Listening | { workers: number }>;
  close(callback?: (error?: Error) => void): Promise<void>;
  /** Fastify's `decorate(name, value)`: the app (or scope) has `name`. */
  decorate(name: string, value: unknown): this;
  hasDecorator(name: string): boolean;
  /** Fastify's `app.log`: pino's levels and `child()`, handed to the `logger` option's logger. */
  readonly log: LogFacade;
  /**
   * One request through the whole core without a socket (Fastify's `inject`): routing,
   * validation, compression, problem responses, as on the network.
   */
  inject(): InjectChain;
  inject(options: InjectOptions | string): Promise<InjectResponse>;
  inject(options: InjectOptions | string, callback: (error: Error | null, response?: InjectResponse) => void): void;
  /**
   * Fastify's hooks, in Fastify's order: `onRequest` (every request, refused ones too),
   * `preHandler` (after validation), `onSend` (may return a new payload), `onError`; `async` or
   * with a `done` callback. `preParsing`/`preValidation` run as `onRequest`, `preSerialization`
   * as `onSend`. `onReady`/`onClose` run once before serving and after `close()`'s drain;
   * `onListen` once `listen()` has bound its socket (not waited for; a failure is logged), and
   * `preClose` as `close()` begins, while requests in flight are still served.
   */
  addHook(name: 'onRequest' | 'preParsing' | 'preValidation' | 'preHandler', hook: (ctx: Context, reply: Reply, done: (error?: Error) => void) => unknown): this;
  addHook(name: 'onSend' | 'preSerialization', hook: (ctx: Context, reply: Reply, payload: unknown, done: (error?: Error | null, payload?: unknown) => void) => unknown): this;
  addHook(name: 'onError', hook: (ctx: Context, reply: Reply, error: Error, done: () => void) => unknown): this;
  // `done` is not optional, so a hook that takes it may call it; an async hook without it fits too.
  /** Runs as each route is declared after it, in this app or scope, with its options to change (@fastify/rate-limit adds its hook so). */
  addHook(name: 'onRoute', hook: (this: App, routeOptions: RouteHookOptions) => void): this;
  /** Runs as each plugin scope is made under this app or scope, with it and its options. */
  addHook(name: 'onRegister', hook: (instance: App, options: Record<string, unknown>) => void): this;
  addHook(name: 'onReady', hook: (this: App, done: (error?: Error) => void) => unknown): this;
  addHook(name: 'onListen', hook: (this: App, done: (error?: Error) => void) => unknown): this;
  addHook(name: 'preClose', hook: (this: App, done: (error?: Error) => void) => unknown): this;
  addHook(name: 'onClose', hook: (this: App, instance: App, done: (error?: Error) => void) => unknown): this;
  /** Answers what this app's (or scope's) hooks and handlers throw, and the requests the core refuses. */
  setErrorHandler(handler: (error: HandledError, ctx: Context, reply: Reply) => unknown): this;
  /** Answers the requests no route takes (404). */
  setNotFoundHandler(handler: (ctx: Context, reply: Reply) => unknown): this;
  /** `register(cors, options)` / `register(compress, options)`: the app's CORS or compression, done by the core. */
  register<O>(plugin: CorePlugin<O>, options?: NoInfer<O>): this;
  /** Fastify's `register`: `plugin(scope, options)` declares routes and hooks served under `prefix`. */
  register<O extends Record<string, unknown>>(plugin: (scope: App, options: O, done: (error?: Error) => void) => unknown, options?: O & { prefix?: string }): this;
  /** Every `ctx` gets `name`: a method, or a default that hooks set per request. */
  decorateRequest(name: string, value: ((...args: any[]) => unknown) | string | number | boolean | null | undefined | { getter?: (this: Context) => unknown; setter?: (this: Context, value: any) => void }): this;
  hasRequestDecorator(name: string): boolean;
  /** The body of a request of `contentType` (on a route that declares no body) is what `parser` gives: read as `ctx.body` after the onRequest hooks. */
  addContentTypeParser(contentType: string | RegExp | Array<string | RegExp>, parser: ContentTypeParser<import('node:stream').Readable>): this;
  addContentTypeParser(contentType: string | RegExp | Array<string | RegExp>, options: { parseAs: 'string'; bodyLimit?: number }, parser: ContentTypeParser<string>): this;
  addContentTypeParser(contentType: string | RegExp | Array<string | RegExp>, options: { parseAs: 'buffer'; bodyLimit?: number }, parser: ContentTypeParser<Buffer>): this;
  addContentTypeParser(contentType: string | RegExp | Array<string | RegExp>, options: { bodyLimit?: number }, parser: ContentTypeParser<import('node:stream').Readable>): this;
  hasContentTypeParser(contentType: string | RegExp): boolean;
  removeContentTypeParser(contentType: string | RegExp | Array<string | RegExp>): this;
  removeAllContentTypeParsers(): this;
  /** Every `reply` gets `name`: a method (`this` the reply), an accessor, or a default that hooks set per request. */
  decorateReply(name: string, value: ((this: Reply, ...args: any[]) => unknown) | string | number | boolean | null | undefined | { getter?: (this: Reply) => unknown; setter?: (this: Reply, value: any) => void }): this;
  hasReplyDecorator(name: string): boolean;
  /** Waits for async plugins, then runs the `onReady` hooks (once). */
  ready(): Promise<void>;
  /** Serves a directory (@fastify/static's `root` and `prefix`), by the core. */
  static(options: StaticOptions): this;
}

export interface StaticOptions {
  /** The directory to serve. */
  root: string;
  /** Where (default `/`: the paths no route takes). */
  prefix?: string;
  /** A directory's `index.html` answers for it (default true). */
  index?: boolean;
  /** A `.br`/`.gz` sibling goes to a client that accepts it (default true). */
  precompressed?: boolean;
  /** The files' `Cache-Control` (none by default). */
  cacheControl?: string;
  /** Serve hidden files too (default false). */
  dotfiles?: boolean;
  /** Follow a symlink even where it leads outside `root` (default false: 404). */
  followSymlinks?: boolean;
}

/** What hooks and error handlers answer through (Fastify's `reply`). */
export interface Reply {
  statusCode: number;
  readonly sent: boolean;
  code(statusCode: number): this;
  status(statusCode: number): this;
  header(name: string, value: string | number | string[]): this;
  headers(headers: Record<string, string | number | string[]>): this;
  type(contentType: string): this;
  getHeader(name: string): string | string[] | undefined;
  getHeaders(): Record<string, string | string[]>;
  hasHeader(name: string): boolean;
  removeHeader(name: string): this;
  /** Fastify's `reply.serialize`: the payload's JSON text. */
  serialize(payload: unknown): string;
  send(payload?: unknown): this;
  /** A 302 (or `code`, or what `code()` set) to `url`. */
  redirect(url: string, code?: number): this;
  /** Answers as if no route had taken the request: the scope's not-found handler, else the core's 404. */
  callNotFound(): this;
  /** @fastify/static's: the file `filename` names below `rootPath` (default: the first
   * `app.static()` root), sent by the core with ranges, ETag and 304s; outside it, a 404. */
  sendFile(filename: string, rootPath?: string): this;
  sendFile(filename: string, options: Record<string, never>): this;
  /** `sendFile` as an attachment saved under `name` (default: the file's own name). */
  download(filename: string, name?: string): this;
  /** Node's `ServerResponse` names over this reply: the status and headers; `end(body)` sends; `write()` is refused (the core writes). */
  readonly raw: RawReply;
  /** The request this reply answers, the app, and the request's logger (Fastify's). */
  readonly request: Context;
  readonly server: App;
  readonly log: LogFacade;
}

/** `reply.raw`: what of Node's `ServerResponse` a reply offers. */
export interface RawReply {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  setHeader(name: string, value: string | number | string[]): this;
  getHeader(name: string): string | string[] | undefined;
  getHeaders(): Record<string, string | string[]>;
  hasHeader(name: string): boolean;
  removeHeader(name: string): void;
  writeHead(statusCode: number, headers?: Record<string, string | number | string[]>): this;
  end(body?: unknown): this;
}

/** What an `onRoute` hook gets: the route's options, to read or change before it is declared. */
export interface RouteHookOptions extends RouteOptions {
  method: string | string[];
  /** The whole path, the scope's prefix included; `path` is the same. */
  url: string;
  path: string;
  /** The path as the route declared it, without the prefix. */
  routePath: string;
  prefix: string;
  handler: Handler;
  config: Record<string, unknown>;
  [option: string]: unknown;
}

export interface SocketOptions {
  query?: Schema;
  headers?: Schema;
  cookies?: Schema;
  params?: Schema;
  cors?: CorsOptions | FastifyCorsOptions | true;
  /** Subprotocols the route speaks, preferred first (`Sec-WebSocket-Protocol`). */
  subprotocols?: string[];
  /** Fastify's route `config`, for hooks (`ctx.routeOptions.config`). */
  config?: Record<string, unknown>;
  /** Replaces the app's `wsMaxMessageBytes` for this route. */
  maxMessageBytes?: number;
  /** The route's own hooks on the handshake (a reply one sends refuses the upgrade). */
  onRequest?: RouteHook | RouteHook[];
  preValidation?: RouteHook | RouteHook[];
  preHandler?: RouteHook | RouteHook[];
  onSend?: SendHook | SendHook[];
  onError?: ErrorHook | ErrorHook[];
}

/** Called once per connection, after the upgrade; returning does not close the socket (throwing does, with 1011). */
export type SocketHandler<Path extends string = string> = (socket: WebSocket, ctx: Context<Path, undefined>) => unknown;

/**
 * One WebSocket connection, in the `ws` package's shape. Text messages arrive as strings,
 * binary ones as Buffers; a string is sent as text, a Buffer or typed array as binary.
 */
export declare class WebSocket {
  static readonly CONNECTING: 0;
  static readonly OPEN: 1;
  static readonly CLOSING: 2;
  static readonly CLOSED: 3;
  readonly readyState: 0 | 1 | 2 | 3;
  /** The subprotocol chosen in the handshake ('' when none). */
  readonly protocol: string;
  /** Bytes sent and not yet taken by the client. */
  readonly bufferedAmount: number;
  send(data: string | Buffer | ArrayBuffer | ArrayBufferView, callback?: (error?: Error) => void): void;
  send(data: string | Buffer | ArrayBuffer | ArrayBufferView, options: Record<string, unknown>, callback?: (error?: Error) => void): void;
  /** Pings the client; its answer is a 'pong' event with the same data. */
  ping(data?: Buffer | string): void;
  close(code?: number, reason?: string): void;
  /** Closes with 1001 at once, for a client that stopped answering pings (`ws`'s heartbeat). */
  terminate(): void;
  on(event: 'message', listener: (data: string | Buffer, isBinary: boolean) => void): this;
  on(event: 'close', listener: (code: number, reason: string) => void): this;
  on(event: 'pong', listener: (data: Buffer) => void): this;
  /** Taken as `ws` takes it; never emitted: a broken connection or protocol ends in 'close' (1006, 1002, …). */
  on(event: 'error', listener: (error: Error) => void): this;
  once(event: 'message', listener: (data: string | Buffer, isBinary: boolean) => void): this;
  once(event: 'close', listener: (code: number, reason: string) => void): this;
  once(event: 'pong', listener: (data: Buffer) => void): this;
  off(event: 'message' | 'close' | 'pong', listener: (...args: any[]) => void): this;
  removeListener(event: 'message' | 'close' | 'pong', listener: (...args: any[]) => void): this;
  [Symbol.asyncIterator](): AsyncIterator<string | Buffer>;
}

/** One Server-Sent Event; `data` is sent as it is when a string, else as JSON. */
export interface ServerSentEvent {
  data?: unknown;
  /** The event's type (`addEventListener(event, ...)` on the client). */
  event?: string;
  /** What a reconnecting client sends back as `Last-Event-ID`. */
  id?: string | number;
  /** The client's reconnection delay in milliseconds. */
  retry?: number;
  comment?: string;
}

/** A stream of Server-Sent Events (made by `sse()`). */
export declare class EventStream {
  constructor(source: AsyncIterable<ServerSentEvent | string> | Iterable<ServerSentEvent | string>, init?: { status?: number; headers?: Record<string, string | string[]> });
}

/**
 * Sends `source`'s events as `text/event-stream`: the core frames them, keeps a quiet stream
 * alive (`sseKeepAlive`) and ends it at shutdown.
 */
/** `keepAlive`: the stream's own keep-alive period in ms (0: none), in place of the app's `sseKeepAlive`. */
/** A stand-in for a Fastify plugin whose work the core does: `app.register(plugin, options)` sets it. */
export interface CorePlugin<O> {
  /** Registered, never called (and so never taken for a plugin function). */
  (registeredOnly: never): never;
  settingsOf(options: O): unknown;
}

/** @fastify/compress's options, as `register(compress, options)` takes them. */
export interface CompressPluginOptions {
  global?: true;
  /** Bytes below which a response is sent as it is (default 1024). */
  threshold?: number;
  /** The codings offered (default br, gzip, zstd; deflate is left to the identity). */
  encodings?: Array<'br' | 'gzip' | 'zstd' | 'deflate' | 'identity'>;
  zlibOptions?: { level?: number };
}

/** @fastify/cors, done by the core: `app.register(cors, { origin: true })` (its options and defaults). */
export declare const cors: CorePlugin<FastifyCorsOptions>;
/** @fastify/compress, done by the core: `app.register(compress, { threshold: 2048 })`. */
export declare const compress: CorePlugin<CompressPluginOptions>;

export declare function sse(source: AsyncIterable<ServerSentEvent | string> | Iterable<ServerSentEvent | string>, init?: { status?: number; headers?: Record<string, string | string[]>; keepAlive?: number }): EventStream;

/** An explicit response: status, headers, and a body (string, Buffer, JSON, or a stream sent chunk by chunk). */
export declare class Response {
  constructor(body?: unknown, init?: { status?: number; headers?: Record<string, string | string[]>; type?: string });
  /** The Fetch API's `Response.json(data, init)`: `data` sent as JSON. */
  static json(data: unknown, init?: { status?: number; headers?: Record<string, string | string[]> }): Response;
  body: unknown;
  status: number;
  headers: Record<string, string | string[]>;
  type?: string;
}

/** Throw to answer with an RFC 9457 problem response. */
export declare class HttpError extends Error {
  constructor(status: number, detail?: string, options?: { headers?: Record<string, string> });
  status: number;
  /** The same status, under Fastify's name. */
  statusCode: number;
  detail?: string;
  headers?: Record<string, string>;
  /** A refused request's validation errors (422), as the problem lists them. */
  validation?: ValidationIssue[];
}

/** One entry of a 422 problem's `errors` (FastAPI's shape). */
export interface ValidationIssue {
  type: string;
  loc: Array<string | number>;
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/**
 * What an error handler receives: what a handler or hook threw (any Error, an `HttpError`), or
 * a refusal of the core's as an `HttpError` with its `validation` (422) and `problem`.
 */
export type HandledError = Error & {
  status?: number;
  statusCode?: number;
  detail?: string;
  validation?: ValidationIssue[];
  problem?: Record<string, unknown>;
};

/** The version of the Rust crates the native addon was built from. */
export declare function version(): string;
/** The media type of Ferrule's error responses: `application/problem+json`. */
export declare function problemJson(): string;

/** What `inject()` without options returns: light-my-request's chain, sent by `end()` or `await`. */
export interface InjectChain extends PromiseLike<InjectResponse> {
  get(url: string): this;
  post(url: string): this;
  put(url: string): this;
  patch(url: string): this;
  delete(url: string): this;
  head(url: string): this;
  options(url: string): this;
  trace(url: string): this;
  headers(headers: Record<string, string | string[]>): this;
  query(query: InjectOptions['query']): this;
  cookies(cookies: Record<string, string>): this;
  payload(payload: unknown): this;
  body(body: unknown): this;
  end(): Promise<InjectResponse>;
  end(callback: (error: Error | null, response?: InjectResponse) => void): void;
  catch(onRejected: (error: unknown) => unknown): Promise<unknown>;
}

export interface InjectOptions {
  method?: string;
  /** A path with its query string (`/items?n=1`), or an absolute URL whose host becomes `Host`. */
  url?: string;
  path?: string;
  query?: Record<string, string | number | boolean | Array<string | number | boolean>> | string;
  headers?: Record<string, string | string[] | undefined>;
  cookies?: Record<string, string>;
  /** A string or Buffer as it is; anything else as JSON (with `content-type: application/json`). */
  payload?: unknown;
  body?: unknown;
}

export interface InjectCookie {
  name: string;
  value: string;
  [attribute: string]: string | number | boolean;
}

export interface InjectResponse {
  statusCode: number;
  statusMessage: string;
  /** Lower-case names; `set-cookie` is an array, other repeated headers are joined with ", ". */
  headers: Record<string, string | string[]>;
  /** Every header line as `[name, value, name, value, …]`, in order (Node's `rawHeaders`). */
  rawHeaders: string[];
  rawPayload: Buffer;
  payload: string;
  body: string;
  json<T = any>(): T;
  cookies: InjectCookie[];
  /** The body broke off before its end (a stream whose producer threw). */
  cutOff: boolean;
}
