//! Route and app descriptions as plain data.
//!
//! Bindings derive these from their language's idioms (type hints, option objects, keyword
//! arguments) and the fixture corpus stores them as JSON, so every language describes a route
//! the same way and the core compiles it the same way.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// One route: method, path template and the declared inputs with their JSON Schemas.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    pub method: String,
    /// Path template: `/users/{id:int}`, `/files/{rest:path}`, `/users/:id`; a parameter may
    /// share its segment with text (`/files/{name}.{ext}`, `/near/:lat-:lng`) or carry an
    /// expression of its own (`/at/:hour(^\d{2})h`). With a `pattern`, the route's label.
    pub path: String,
    /// A regular expression (Rust's `regex` syntax) that matches the whole path, in its
    /// canonical spelling, instead of the template: Sinatra's Regexp routes. Each group is a
    /// path parameter, by its name or else its number (`1`, `2`, …). Routes with templates the
    /// router holds are matched first; then these and the templates it cannot hold, in the
    /// order they were declared. Left out of the OpenAPI document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Extra constraints on path parameters; their types come from the template.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path_params: Vec<ParamSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub query: Vec<ParamSpec>,
    /// Query parameters `query` does not declare are kept in the request's `query` too, as
    /// sent (text; a repeated name's values an array), after the declared ones: Fastify's
    /// `request.query` beside a querystring schema without `additionalProperties: false`.
    /// Off: only the declared ones (FastAPI's parameters; `raw_query` has the rest).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_undeclared_query: bool,
    /// A parameter or form field declared as a uuid, date or date-time reaches the handler as
    /// the text it was sent, once read, as Fastify hands it over. Off: as the value read
    /// (Python's `UUID`, `date`, `datetime`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub formats_as_sent: bool,
    /// The sources (`query`, `header`, `cookie`) in which a name the route does not declare is
    /// refused (422 `extra_forbidden` at it), as FastAPI refuses one for a parameter model with
    /// `extra="forbid"`. Empty: undeclared names are let be.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refuse_undeclared: Vec<String>,
    /// A source's object schema as the program wrote it, by source (`query`, `header`,
    /// `cookie`), for what it says of the parameters as one object: `anyOf` of `required`s,
    /// `minProperties`, `dependentRequired`, draft-07's `dependencies`, … (the rest of a Fastify
    /// querystring schema beside its `properties`, which the core keeps: `params::whole`).
    /// Judged against the parameters sent (declared ones typed, the rest as sent) once each has
    /// passed its own schema.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub object_rules: BTreeMap<String, Json>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<ParamSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cookies: Vec<ParamSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<BodySpec>,
    /// Replaces the app's CORS policy for this route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cors: Option<CorsConfig>,
    /// Replaces the app's compression settings for this route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression: Option<CompressionConfig>,
    /// Replaces the app's body limit (bytes) for this route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_limit: Option<usize>,
    /// Replaces the app's handler timeout for this route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Makes the route a WebSocket endpoint (method GET): its parameters are validated as any
    /// route's, then the connection is upgraded and the handler gets a socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub websocket: Option<SocketSpec>,
    /// The operation's one-line summary in the OpenAPI document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The operation's description (Markdown) in the OpenAPI document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The operation's id in the OpenAPI document (default: method and path, `get_users_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    /// The OpenAPI tags the docs page groups the operation under.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Marked deprecated in the OpenAPI document (still served).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deprecated: bool,
    /// Whether the route is in the OpenAPI document at all.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub include_in_schema: bool,
    /// What the route answers, by status (`"200"`, `"2XX"`, `"default"`): a JSON response is
    /// written with only what its schema declares (see [`crate::shape`]), and the schema is
    /// the response's in the OpenAPI document.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub responses: BTreeMap<String, ResponseSpec>,
    /// Responses written into the OpenAPI document only (FastAPI's `responses=`), by status as
    /// `responses` is keyed: each an OpenAPI Response Object (`description`, `content` by
    /// media type, `headers`, …) merged over what the document says of that status, object
    /// into object. A `schema` under `content` is JSON Schema, its models made components as a
    /// declared response's are. Nothing is filtered or validated by them: a 404 documented
    /// with a model is still whatever the handler sends.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub documented_responses: BTreeMap<String, Json>,
    /// The operation's OpenAPI security requirements, as OpenAPI writes them
    /// (`[{"bearerAuth": []}]`: any one object suffices, and it needs every scheme it names,
    /// with those scopes); `Some(vec![])` says the operation needs none. Each name is a scheme
    /// of the app's `security_schemes` or of the route's own. The document and the docs page
    /// (its Authorize button) read them; checking the credentials is the app's (a hook, a
    /// dependency), as in FastAPI and @fastify/swagger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<Vec<BTreeMap<String, Vec<String>>>>,
    /// Security schemes the route brings with it (a Python security dependency's), by name:
    /// they join the document's `components.securitySchemes`, where a name must mean one scheme.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub security_schemes: BTreeMap<String, Json>,
}

/// A declared response: the JSON Schema of its body, and words for the docs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ResponseSpec {
    pub schema: Json,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

fn is_true(value: &bool) -> bool {
    *value
}

/// A directory served under a path prefix (see [`crate::static_files`]): Starlette's
/// `StaticFiles`, `@fastify/static`, Sinatra's public folder.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StaticSpec {
    /// Where it is served: `/static`; `/` serves it beside the routes, for the paths no route
    /// takes.
    pub prefix: String,
    /// The directory on disk (relative to the working directory, or absolute).
    pub directory: String,
    /// A directory's `index.html` answers for it (default true).
    #[serde(default = "yes")]
    pub index: bool,
    /// A file's `.br` or `.gz` sibling is sent to a client that accepts it (default true).
    #[serde(default = "yes")]
    pub precompressed: bool,
    /// `Cache-Control` of the files (none by default: clients revalidate with the ETag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<String>,
    /// Files and directories whose names start with `.` are served too (default false: 404,
    /// so a `.env` or `.git` left in the directory is never sent).
    #[serde(default)]
    pub dotfiles: bool,
    /// A symlink is followed wherever it leads (default false: one whose target is outside
    /// the directory is a 404, as in Starlette's `StaticFiles`).
    #[serde(default)]
    pub follow_symlinks: bool,
}

impl StaticSpec {
    pub fn new(prefix: impl Into<String>, directory: impl Into<String>) -> Self {
        StaticSpec { prefix: prefix.into(), directory: directory.into(), index: true, precompressed: true, cache_control: None, dotfiles: false, follow_symlinks: false }
    }
}

/// A mount's prefix is a plain path and its `Cache-Control` a value HTTP can carry.
pub(crate) fn check_static(spec: &StaticSpec) -> Result<(), String> {
    if !spec.prefix.starts_with('/') || spec.prefix.contains(['{', '}', '*', '?', '#']) || spec.prefix.contains("/:") {
        return Err(format!("static files: the prefix is a plain path starting with `/`, not `{}`", spec.prefix));
    }
    if let Some(value) = &spec.cache_control {
        http::HeaderValue::from_str(value).map_err(|_| format!("static files at {}: cache_control `{value}` is not a header value", spec.prefix))?;
    }
    Ok(())
}

/// What a WebSocket route accepts beyond its parameters.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SocketSpec {
    /// Subprotocols the route speaks, preferred first; the first of them the client offers is
    /// chosen (`Sec-WebSocket-Protocol`). None offered in common: no subprotocol.
    pub subprotocols: Vec<String>,
    /// Replaces the app's `ws_max_message_bytes` for this route.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_message_bytes: Option<usize>,
}

impl RouteSpec {
    /// Every schema the route declares with OpenAPI 3.0's `nullable: true` (Ajv's, so
    /// Fastify's) rewritten as JSON Schema's `null` type ([`crate::nullable`]).
    pub fn read_nullable(&mut self) {
        for param in self.path_params.iter_mut().chain(&mut self.query).chain(&mut self.headers).chain(&mut self.cookies) {
            crate::nullable::rewrite(&mut param.schema);
        }
        if let Some(schema) = self.body.as_mut().and_then(|body| body.schema.as_mut()) {
            crate::nullable::rewrite(schema);
        }
        for response in self.responses.values_mut() {
            crate::nullable::rewrite(&mut response.schema);
        }
    }
}

impl RouteSpec {
    pub fn new(method: impl Into<String>, path: impl Into<String>) -> Self {
        RouteSpec {
            method: method.into(),
            path: path.into(),
            pattern: None,
            path_params: Vec::new(),
            query: Vec::new(),
            keep_undeclared_query: false,
            formats_as_sent: false,
            refuse_undeclared: Vec::new(),
            object_rules: BTreeMap::new(),
            headers: Vec::new(),
            cookies: Vec::new(),
            body: None,
            cors: None,
            compression: None,
            body_limit: None,
            timeout_ms: None,
            websocket: None,
            summary: None,
            description: None,
            operation_id: None,
            tags: Vec::new(),
            deprecated: false,
            include_in_schema: true,
            responses: BTreeMap::new(),
            documented_responses: BTreeMap::new(),
            security: None,
            security_schemes: BTreeMap::new(),
        }
    }
}

/// A declared parameter and the JSON Schema its coerced value must satisfy.
///
/// The schema's `type`/`format` drive coercion from text (`integer`, `number`, `boolean`,
/// `string` with `uuid`/`date`/`date-time`, `array` of those for repeated keys); every other
/// keyword (`minimum`, `maxLength`, `pattern`, `enum`, …) is validated after coercion.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    pub name: String,
    #[serde(default = "string_schema")]
    pub schema: Json,
    /// Defaults to "required unless the schema has a `default`".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// How an array query parameter is written, as OpenAPI says it (default `form`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub style: Option<ParamStyle>,
    /// OpenAPI's `explode`: whether each item is a `key=value` of its own (the default for
    /// `form`) or the items are one value joined by the style's separator (the default for the
    /// others).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explode: Option<bool>,
}

/// OpenAPI's styles for array query parameters. Whatever the style, the bracket convention of
/// PHP, Rails and `qs` (`tag[]=a&tag[]=b`) is read as the array `tag` too.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum ParamStyle {
    /// `tag=a&tag=b`, or with `explode: false`, `tag=a,b`.
    Form,
    /// `tag=a|b`.
    PipeDelimited,
    /// `tag=a%20b`.
    SpaceDelimited,
    /// An object, one key per leaf: `filter[price][gte]=10&filter[tags][]=new`.
    DeepObject,
}

impl ParamSpec {
    /// The separator of one value's items: none when each item is a key of its own.
    pub(crate) fn separator(&self) -> Option<char> {
        let style = self.style.unwrap_or(ParamStyle::Form);
        if self.explode.unwrap_or(style == ParamStyle::Form) {
            return None;
        }
        Some(match style {
            ParamStyle::Form => ',',
            ParamStyle::PipeDelimited => '|',
            ParamStyle::SpaceDelimited => ' ',
            ParamStyle::DeepObject => return None,
        })
    }
}

fn string_schema() -> Json {
    serde_json::json!({"type": "string"})
}

impl ParamSpec {
    pub fn new(name: impl Into<String>, schema: Json) -> Self {
        ParamSpec { name: name.into(), schema, required: None, style: None, explode: None }
    }

    pub fn optional(mut self) -> Self {
        self.required = Some(false);
        self
    }

    pub fn is_required(&self) -> bool {
        self.required.unwrap_or_else(|| self.schema.get("default").is_none())
    }
}

/// How a request body is read.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BodyKind {
    /// `application/json` (or `+json`), validated against the schema.
    Json,
    /// `application/x-www-form-urlencoded`, fields coerced like query parameters.
    Form,
    /// `multipart/form-data`; fields with `format: binary` are files.
    Multipart,
    /// Any content type, handed over as bytes.
    Bytes,
    /// `text/*`, handed over as a UTF-8 string.
    Text,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    pub kind: BodyKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Json>,
    #[serde(default = "yes")]
    pub required: bool,
    /// Largest accepted multipart file, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_file_size: Option<usize>,
}

fn yes() -> bool {
    true
}

impl BodySpec {
    pub fn json(schema: Json) -> Self {
        BodySpec { kind: BodyKind::Json, schema: Some(schema), required: true, max_file_size: None }
    }

    pub fn of_kind(kind: BodyKind, schema: Option<Json>) -> Self {
        BodySpec { kind, schema, required: true, max_file_size: None }
    }
}

/// A CORS policy, as in Starlette's `CORSMiddleware` and tower-http's `CorsLayer`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CorsConfig {
    /// Exact origins, or `["*"]` for any.
    pub allow_origins: Vec<String>,
    /// Methods, or `["*"]`; empty means GET, HEAD, POST.
    pub allow_methods: Vec<String>,
    /// Request headers, or `["*"]`.
    pub allow_headers: Vec<String>,
    pub expose_headers: Vec<String>,
    pub allow_credentials: bool,
    pub max_age_secs: Option<u64>,
    /// Origins a regular expression matches whole (Starlette's `allow_origin_regex`, which
    /// `re.fullmatch`es), besides those `allow_origins` lists: `https://.*\.example\.com`.
    pub allow_origin_regex: Option<String>,
    /// Answer a preflight's `Access-Control-Request-Private-Network: true` with
    /// `Access-Control-Allow-Private-Network: true` (Private Network Access; Starlette's
    /// `allow_private_network`).
    pub allow_private_network: bool,
    /// The status a preflight is answered with; `None` is 200, as Starlette and rack-cors answer.
    /// @fastify/cors answers 204 (its `optionsSuccessStatus`). Any 2xx passes the Fetch
    /// standard's check of a preflight, so only a client's own tests tell them apart.
    pub preflight_status: Option<u16>,
}

/// Response compression; an algorithm is used when the client accepts it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CompressionConfig {
    pub enabled: bool,
    /// Bodies smaller than this many bytes are sent as they are.
    pub min_size: u16,
    pub gzip: bool,
    pub br: bool,
    pub zstd: bool,
    /// Each coding's level on its own scale (gzip 1–9, brotli 0–11, zstd 1–22; Starlette's
    /// `GZipMiddleware(compresslevel=9)`); `None` is each one's default (gzip 6, brotli 4, zstd 3).
    pub level: Option<i32>,
}

impl Default for CompressionConfig {
    fn default() -> Self {
        CompressionConfig { enabled: true, min_size: 500, gzip: true, br: true, zstd: true, level: None }
    }
}

/// App-wide settings; every field has a default that suits a production server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AppConfig {
    /// Largest accepted request body, in bytes.
    pub body_limit: usize,
    pub cors: Option<CorsConfig>,
    pub compression: Option<CompressionConfig>,
    /// The hosts the app answers for (`example.com`, `*.example.com`, `*`); a request naming
    /// another in `Host` is a 400 (`middleware::trusted_host`). `None`: any host.
    pub allowed_hosts: Option<Vec<String>>,
    /// With `allowed_hosts`: a request for `example.com` where `www.example.com` is listed is
    /// redirected there (307) rather than refused, as Starlette's `TrustedHostMiddleware` does.
    pub www_redirect: bool,
    /// The proxies whose `X-Forwarded-For`, `-Proto` and `-Host` are believed (see
    /// [`crate::forwarded`]): addresses, networks (`10.0.0.0/8`), `loopback`, `linklocal`,
    /// `uniquelocal`, or `*`; an entry may list several, comma-separated. Empty (the default in
    /// the core): no one's.
    pub trusted_proxies: Vec<String>,
    /// Generate `x-request-id` when the client sends none, and echo it on the response.
    pub request_id: bool,
    /// One record per request (`ferrule::access`): method, path, status, bytes, time, request id.
    pub access_log: bool,
    /// For development: a JSON response that its route's declared response schema forbids
    /// (after undeclared fields are left out) becomes a 500 whose problem lists what is wrong,
    /// and is logged. Off by default: it costs a parse and a validation per response.
    pub validate_responses: bool,
    /// Records below this level are not written: `debug`, `info` (default), `warn`, `error`, `off`.
    pub log_level: crate::log::LogLevel,
    /// Handler time limit; `None` waits forever.
    pub timeout_ms: Option<u64>,
    /// Total size of all request header lines above which the request gets 431.
    pub max_header_bytes: usize,
    /// How long a graceful shutdown waits for in-flight requests.
    pub shutdown_timeout_ms: u64,
    /// How long a client may take to send a request's head (request line and headers), from
    /// its first byte (from the connection's start for the first request). Past it: 408 and
    /// the connection closed. 0 switches it off.
    pub header_read_timeout_ms: u64,
    /// The longest pause between two reads of a request body, and the grace period before
    /// `min_body_rate` applies. Past either: 408 and the connection closed. 0 switches both off.
    pub body_read_timeout_ms: u64,
    /// Bytes per second a body must average once `body_read_timeout_ms` has passed. 0: no minimum.
    pub min_body_rate: u64,
    /// How long a keep-alive connection may wait for its next request. 0 switches it off.
    pub keep_alive_timeout_ms: u64,
    /// How long a response may wait for the client to read (no byte of it accepted by the
    /// socket). Past it the connection is closed: a client that stops reading cannot hold
    /// a connection and its response forever. 0 switches it off.
    pub send_timeout_ms: u64,
    /// Most connections held at once; also capped by the process's file-descriptor limit less
    /// a reserve. At the cap, idle connections are closed first to make room.
    pub max_connections: usize,
    /// Requests waiting for or running in one interpreter (Python, Node, Ruby); beyond it the
    /// core answers 503 with `Retry-After` at once.
    pub max_queued_requests: usize,
    /// HTTP/2: streams one connection may have open at once.
    pub http2_max_concurrent_streams: u32,
    /// HTTP/2: interval of keep-alive pings to an idle peer; 0 switches them off.
    pub http2_keep_alive_interval_ms: u64,
    /// Server-Sent Events: a comment line is sent when an event stream has been quiet this
    /// long, so proxies and load balancers do not close it as idle; 0 switches it off.
    pub sse_keep_alive_ms: u64,
    /// WebSockets: largest message (after reassembling its fragments) a client may send, in
    /// bytes; a larger one closes the connection with 1009.
    pub ws_max_message_bytes: usize,
    /// WebSockets: bytes a handler may have queued for one client that has not read them yet;
    /// past it the connection is closed with 1008, so a slow reader cannot grow the server.
    pub ws_send_buffer_bytes: usize,
    /// WebSockets: a connection silent this long gets a ping; one silent twice as long (no
    /// pong either) is closed with 1001. 0 switches both off.
    pub ws_idle_timeout_ms: u64,
    /// Deepest nesting of arrays and objects accepted in a JSON body (1 to 127).
    pub max_json_depth: usize,
    /// A JSON body with a `__proto__` key, or a `constructor` key holding a `prototype`, is
    /// refused (422 `json_forbidden_key`), as Fastify refuses it by default: in JavaScript,
    /// `Object.assign` or a deep merge of such a body changes an object's prototype. Off by
    /// default in the core; Node's binding turns it on.
    pub refuse_prototype_keys: bool,
    /// A path no route takes whose twin with the trailing slash added or taken away is routed
    /// is answered 307 to that twin (Starlette's `redirect_slashes`; see `slash_redirect`).
    /// Off by default in the core, as in Fastify, Sinatra and axum; Python's binding turns it on.
    pub redirect_slashes: bool,
    /// Multipart bodies: most parts in one body.
    pub max_multipart_parts: usize,
    /// Multipart bodies: largest part header block, in bytes.
    pub max_part_header_bytes: usize,
    /// Multipart bodies: longest file name, in bytes.
    pub max_filename_bytes: usize,
    /// The API's name in the OpenAPI document (`info.title`).
    pub title: String,
    /// The API's version in the OpenAPI document (`info.version`).
    pub version: String,
    /// The API's description (Markdown) in the OpenAPI document.
    pub description: Option<String>,
    /// The OpenAPI document's `servers` (`{"url": ..., "description": ...}` objects).
    pub servers: Vec<Json>,
    /// The OpenAPI document's `tags` (`{"name": ..., "description": ...}` objects).
    pub openapi_tags: Vec<Json>,
    /// Where the OpenAPI document is served (GET); `None` serves none. A route of the app's own
    /// at the same path wins.
    pub openapi_url: Option<String>,
    /// Where the docs page (Swagger UI on that document, served from the core's own copy) is
    /// served (GET); `None` serves none, and so does an `openapi_url` of `None`, as in FastAPI.
    /// A route of the app's own at the same path wins.
    pub docs_url: Option<String>,
    /// Where the Prometheus metrics are served (`/metrics`); `None` (the default) keeps them
    /// out of the request path altogether (see `middleware::metrics`).
    pub metrics_url: Option<String>,
    /// The OpenAPI document's `components.securitySchemes`, by name (`{"bearerAuth": {"type":
    /// "http", "scheme": "bearer"}}`), for routes' `security` to name.
    pub security_schemes: BTreeMap<String, Json>,
}

impl Default for AppConfig {
    fn default() -> Self {
        AppConfig {
            body_limit: 2 * 1024 * 1024,
            cors: None,
            compression: None,
            allowed_hosts: None,
            www_redirect: true,
            trusted_proxies: Vec::new(),
            request_id: true,
            access_log: false,
            validate_responses: false,
            log_level: crate::log::LogLevel::Info,
            timeout_ms: None,
            max_header_bytes: 16 * 1024,
            shutdown_timeout_ms: 10_000,
            header_read_timeout_ms: 30_000,
            body_read_timeout_ms: 30_000,
            min_body_rate: 240,
            keep_alive_timeout_ms: 75_000,
            send_timeout_ms: 60_000,
            max_connections: 16_384,
            max_queued_requests: 1024,
            http2_max_concurrent_streams: 200,
            http2_keep_alive_interval_ms: 30_000,
            sse_keep_alive_ms: 15_000,
            ws_max_message_bytes: 16 * 1024 * 1024,
            ws_send_buffer_bytes: 1024 * 1024,
            ws_idle_timeout_ms: 60_000,
            max_json_depth: 127,
            refuse_prototype_keys: false,
            redirect_slashes: false,
            max_multipart_parts: 1000,
            max_part_header_bytes: 8 * 1024,
            max_filename_bytes: 255,
            title: "Ferrule".into(),
            version: "0.1.0".into(),
            description: None,
            servers: Vec::new(),
            openapi_tags: Vec::new(),
            openapi_url: Some("/openapi.json".into()),
            docs_url: Some("/docs".into()),
            metrics_url: None,
            security_schemes: BTreeMap::new(),
        }
    }
}

/// `T` from the JSON a binding sent for the program's own settings (an app's, a route's). A
/// value of the wrong kind is refused naming where it is (`log_level: unknown variant `loud`,
/// expected one of …`; `cors.allow_origins: …`), which serde alone leaves out, and what it
/// should be in JSON's words, not Rust's (`expected a whole number of 0 or more`, not
/// `expected usize`): the program's author reads it, in whatever language they wrote.
pub fn from_json_named<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, String> {
    let mut reader = serde_json::Deserializer::from_str(json);
    let value: T = serde_path_to_error::deserialize(&mut reader).map_err(|e| {
        let path = e.path().to_string();
        let message = in_json_words(e.into_inner());
        if path == "." || message.starts_with("unknown field") && !path.contains('.') { message } else { format!("{path}: {message}") }
    })?;
    reader.end().map_err(in_json_words)?;
    Ok(value)
}

/// serde_json's message without its position (one line of JSON a binding wrote) and with
/// Rust's type names in the words of the language the value was written in. Only serde's own
/// words are replaced: the value it quotes is the program's and stays as written.
fn in_json_words(error: serde_json::Error) -> String {
    let position = format!(" at line {} column {}", error.line(), error.column());
    let mut text = error.to_string();
    if text.ends_with(&position) {
        text.truncate(text.len() - position.len());
    }
    const EXPECTED: [(&str, &str); 11] = [
        ("usize", "a whole number of 0 or more"),
        ("u64", "a whole number of 0 or more"),
        ("u32", "a whole number of 0 or more"),
        ("u16", "a whole number from 0 to 65535"),
        ("u8", "a whole number from 0 to 255"),
        ("i64", "a whole number"),
        ("i32", "a whole number"),
        ("f64", "a number"),
        ("a sequence", "an array"),
        ("a map", "an object"),
        ("a boolean", "true or false"),
    ];
    if let Some(at) = text.rfind(", expected ") {
        let wanted = &text[at + ", expected ".len()..];
        let plain = EXPECTED.iter().find(|(rust, _)| *rust == wanted).map(|(_, json)| *json);
        let plain = plain.or_else(|| wanted.starts_with("struct ").then_some("an object"));
        if let Some(plain) = plain {
            text = format!("{}, expected {plain}", &text[..at]);
        }
    }
    for kind in ["invalid type", "invalid value"] {
        if let Some(value) = text.strip_prefix(&format!("{kind}: floating point `")) {
            text = format!("{kind}: number `{value}");
        }
    }
    text
}

impl AppConfig {
    /// Settings from JSON (as bindings send them); see [`from_json_named`].
    pub fn from_json(json: &str) -> Result<AppConfig, String> {
        from_json_named(json)
    }

    /// Refuses settings that cannot work, naming the setting.
    /// `allowed_hosts` read for the request path, `None` when every host is served.
    pub(crate) fn allowed_hosts(&self) -> Result<Option<crate::middleware::AllowedHosts>, String> {
        self.allowed_hosts.as_deref().map(|patterns| crate::middleware::AllowedHosts::new(patterns, self.www_redirect)).transpose()
    }

    /// `trusted_proxies` read, `None` when no proxy is trusted.
    pub(crate) fn trusted_proxies(&self) -> Result<Option<crate::forwarded::TrustedProxies>, String> {
        if self.trusted_proxies.is_empty() {
            return Ok(None);
        }
        crate::forwarded::TrustedProxies::new(&self.trusted_proxies).map(Some)
    }

    pub fn check(&self) -> Result<(), String> {
        if !(1..=127).contains(&self.max_json_depth) {
            return Err(format!("max_json_depth must be between 1 and 127 (serde_json's own limit is 128), not {}", self.max_json_depth));
        }
        for (name, value) in [
            ("max_connections", self.max_connections),
            ("max_queued_requests", self.max_queued_requests),
            ("max_multipart_parts", self.max_multipart_parts),
            ("max_part_header_bytes", self.max_part_header_bytes),
            ("max_filename_bytes", self.max_filename_bytes),
            ("ws_max_message_bytes", self.ws_max_message_bytes),
            ("ws_send_buffer_bytes", self.ws_send_buffer_bytes),
        ] {
            if value == 0 {
                return Err(format!("{name} must be at least 1"));
            }
        }
        if self.http2_max_concurrent_streams == 0 {
            return Err("http2_max_concurrent_streams must be at least 1".into());
        }
        if let Some(url) = self.openapi_url.as_deref().filter(|url| !url.starts_with('/')) {
            return Err(format!("openapi_url must be a path starting with `/`, not `{url}`"));
        }
        if let Some(url) = self.docs_url.as_deref().filter(|url| !url.starts_with('/')) {
            return Err(format!("docs_url must be a path starting with `/`, not `{url}`"));
        }
        if self.docs_url.is_some() && self.docs_url == self.openapi_url {
            return Err(format!("docs_url and openapi_url are the same path, `{}`", self.openapi_url.as_deref().unwrap_or_default()));
        }
        if let Some(cors) = &self.cors {
            crate::middleware::cors_layer(cors)?;
        }
        self.allowed_hosts()?;
        self.trusted_proxies()?;
        if let Some(level) = self.compression.as_ref().and_then(|compression| compression.level) {
            crate::middleware::check_level(level)?;
        }
        for (name, scheme) in &self.security_schemes {
            crate::openapi::security::check_scheme(name, scheme).map_err(|e| format!("security_schemes.{e}"))?;
        }
        if let Some(url) = self.metrics_url.as_deref() {
            if !url.starts_with('/') {
                return Err(format!("metrics_url must be a path starting with `/`, not `{url}`"));
            }
            if Some(url) == self.openapi_url.as_deref() || Some(url) == self.docs_url.as_deref() {
                return Err(format!("metrics_url `{url}` is already the OpenAPI document's or the docs page's path"));
            }
        }
        Ok(())
    }
}

/// Builder methods, so Rust code reads like the route it declares:
/// `RouteSpec::get("/users/{id:int}").query("verbose", json!({"type": "boolean", "default": false}))`.
impl RouteSpec {
    pub fn get(path: impl Into<String>) -> Self {
        RouteSpec::new("GET", path)
    }

    pub fn post(path: impl Into<String>) -> Self {
        RouteSpec::new("POST", path)
    }

    pub fn put(path: impl Into<String>) -> Self {
        RouteSpec::new("PUT", path)
    }

    pub fn patch(path: impl Into<String>) -> Self {
        RouteSpec::new("PATCH", path)
    }

    pub fn delete(path: impl Into<String>) -> Self {
        RouteSpec::new("DELETE", path)
    }

    pub fn query(mut self, name: impl Into<String>, schema: Json) -> Self {
        self.query.push(ParamSpec::new(name, schema));
        self
    }

    pub fn header(mut self, name: impl Into<String>, schema: Json) -> Self {
        self.headers.push(ParamSpec::new(name, schema));
        self
    }

    pub fn cookie(mut self, name: impl Into<String>, schema: Json) -> Self {
        self.cookies.push(ParamSpec::new(name, schema));
        self
    }

    /// Extra constraints on a path parameter, e.g. `{"minimum": 1}` for `{id:int}`.
    pub fn path_param(mut self, name: impl Into<String>, schema: Json) -> Self {
        self.path_params.push(ParamSpec::new(name, schema));
        self
    }

    pub fn json_body(mut self, schema: Json) -> Self {
        self.body = Some(BodySpec::json(schema));
        self
    }

    pub fn body(mut self, body: BodySpec) -> Self {
        self.body = Some(body);
        self
    }

    pub fn with_cors(mut self, cors: CorsConfig) -> Self {
        self.cors = Some(cors);
        self
    }

    /// Matched by `pattern` (see [`RouteSpec::pattern`]); `path` stays its label.
    pub fn with_pattern(mut self, pattern: impl Into<String>) -> Self {
        self.pattern = Some(pattern.into());
        self
    }

    /// A WebSocket route at `path`; `subprotocols` preferred first (may be empty).
    pub fn websocket(path: impl Into<String>, subprotocols: &[&str]) -> Self {
        let spec = SocketSpec { subprotocols: subprotocols.iter().map(|p| (*p).to_owned()).collect(), max_message_bytes: None };
        RouteSpec { websocket: Some(spec), ..RouteSpec::new("GET", path) }
    }

    /// Declares what the route answers with `status` (`"200"`, `"2XX"`, `"default"`): fields
    /// the schema does not declare are left out of the response.
    pub fn response(mut self, status: impl Into<String>, schema: Json) -> Self {
        self.responses.insert(status.into(), ResponseSpec { schema, description: None });
        self
    }

    /// Documents what the route may answer with `status` without filtering anything: `response`
    /// is an OpenAPI Response Object (see [`RouteSpec::documented_responses`]).
    pub fn documented_response(mut self, status: impl Into<String>, response: Json) -> Self {
        self.documented_responses.insert(status.into(), response);
        self
    }

    pub fn with_compression(mut self, compression: CompressionConfig) -> Self {
        self.compression = Some(compression);
        self
    }

    pub fn with_body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = Some(bytes);
        self
    }

    pub fn with_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.timeout_ms = Some(timeout.as_millis() as u64);
        self
    }
}

/// The app settings the core knows, by their core (snake_case) names: what every binding's
/// App options map onto, and what `fixtures/fixture.schema.json` must describe.
pub fn app_setting_names() -> Vec<String> {
    match serde_json::to_value(AppConfig::default()) {
        Ok(Json::Object(fields)) => fields.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// The one message for an option nobody knows, in every language: `unknown route option bodyy
/// (did you mean body?)`, or the known names when none is near.
pub fn unknown_option(what: &str, name: &str, known: &[&str]) -> String {
    match nearest_name(name, known) {
        Some(nearest) => format!("unknown {what} {name} (did you mean {nearest}?)"),
        None => format!("unknown {what} {name} (known: {})", known.join(", ")),
    }
}

/// The known option name closest to a misspelled one, for "did you mean" messages in every
/// language: compared without case or `_` (so `body_limit` finds `bodyLimit`), and only
/// when at most a third of the letters differ (so `websocket` suggests nothing).
pub fn nearest_name<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    let folded = |s: &str| s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect::<Vec<_>>();
    let wanted = folded(name);
    known
        .iter()
        .map(|candidate| (edit_distance(&wanted, &folded(candidate)), *candidate))
        .filter(|(distance, _)| *distance <= wanted.len().div_ceil(3))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            current[j + 1] = (previous[j] + usize::from(ca != cb)).min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod nearest_tests {
    use super::nearest_name;

    #[test]
    fn a_misspelling_finds_its_option_and_a_stranger_finds_none() {
        let known = ["body", "bodyLimit", "query", "timeout"];
        assert_eq!(nearest_name("bodyy", &known), Some("body"));
        assert_eq!(nearest_name("body_limit", &known), Some("bodyLimit"));
        assert_eq!(nearest_name("qurey", &known), Some("query"));
        assert_eq!(nearest_name("websocket", &known), None);
        assert_eq!(super::unknown_option("route option", "bodyy", &known), "unknown route option bodyy (did you mean body?)");
        assert_eq!(super::unknown_option("route option", "websocket", &known[..2]), "unknown route option websocket (known: body, bodyLimit)");
        assert!(super::app_setting_names().contains(&"max_queued_requests".to_owned()));
    }
}

#[cfg(test)]
mod from_json_tests {
    use super::AppConfig;
    use crate::log::LogLevel;

    #[test]
    fn a_setting_of_the_wrong_kind_is_refused_by_name() {
        let error = AppConfig::from_json(r#"{"access_log": true, "log_level": "loud"}"#).unwrap_err();
        assert!(error.starts_with("log_level: unknown variant `loud`, expected one of `debug`, `info`"), "{error}");
        let error = AppConfig::from_json(r#"{"body_limit": "big"}"#).unwrap_err();
        assert!(error.starts_with("body_limit: invalid type: string"), "{error}");
        // Found by a README walk: a route's or app's wrong-typed value named no option, or
        // named it in Rust's types (`expected usize`, `expected struct CorsConfig`).
        let error = AppConfig::from_json(r#"{"max_connections": 1.5}"#).unwrap_err();
        assert_eq!(error, "max_connections: invalid type: number `1.5`, expected a whole number of 0 or more");
        let error = AppConfig::from_json(r#"{"body_limit": "floating point, expected u8"}"#).unwrap_err();
        assert_eq!(error, "body_limit: invalid type: string \"floating point, expected u8\", expected a whole number of 0 or more", "the value stays as written");
        let error = AppConfig::from_json(r#"{"cors": 5}"#).unwrap_err();
        assert_eq!(error, "cors: invalid type: integer `5`, expected an object");
        let error = super::from_json_named::<super::RouteSpec>(r#"{"method": "GET", "path": "/a", "timeout_ms": "x"}"#).unwrap_err();
        assert_eq!(error, "timeout_ms: invalid type: string \"x\", expected a whole number of 0 or more");
        let config = AppConfig::from_json(r#"{"log_level": "warn"}"#).unwrap();
        assert_eq!(config.log_level, LogLevel::Warn);
        assert_eq!(AppConfig::from_json("{}").unwrap().log_level, LogLevel::Info);
    }
}
