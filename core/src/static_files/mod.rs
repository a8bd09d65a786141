//! Static files: a directory served under a path prefix (Starlette's `StaticFiles`,
//! `@fastify/static`, Sinatra's public folder), by tower-http's `ServeDir` — the maintained
//! piece for what a file server must get right: `ETag` and `Last-Modified` with conditional
//! requests (304, 412), `Range` (206, 416), content types by extension, precompressed `.br` /
//! `.gz` siblings for clients that accept them, an index file for directories, and bodies
//! streamed from the file in 64 KiB chunks (a 100 MB file costs a chunk of memory, not 100 MB).
//!
//! What the core adds, for every language:
//! * a request path is refused (404, before any file is touched) when, percent-decoded, it has a
//!   `..` segment, a backslash or a NUL — whatever way it was encoded;
//! * every file is opened through [`Confined`], which resolves symlinks and refuses a file whose
//!   real path leaves the directory (unless `follow_symlinks`), and (unless `dotfiles`) one whose
//!   path has a hidden part (`.env`, `.git/config`);
//! * the answers that are not a file are the core's problem responses (404, 405 with `Allow`,
//!   416 with `Content-Range`), and every answer says `X-Content-Type-Options: nosniff`;
//! * a directory asked for without its slash (the mount's own too) is redirected to it under
//!   the mount, `If-Range` is honoured, and several ranges get the whole file (`ServeDir` sees
//!   only the path below the mount, reads no `If-Range`, and refuses several ranges with 416).
//!
//! Cost: a file request is served in Rust and never enters a language. Resolving its real path
//! costs one `realpath` (a `stat` per path component) per request.

use crate::problem::Problem;
use crate::spec::StaticSpec;
use axum::body::Body;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::pin::Pin;
use tower_http::services::fs::{Backend, ServeDir, TokioBackend};

/// A served directory, checked once (it exists, it is a directory) and held by its real path.
#[derive(Clone)]
pub(crate) struct StaticDir {
    root: PathBuf,
    spec: StaticSpec,
}

impl StaticDir {
    pub(crate) fn open(spec: &StaticSpec) -> Result<StaticDir, String> {
        crate::spec::check_static(spec)?;
        let root = std::fs::canonicalize(&spec.directory).map_err(|e| format!("static files at {}: cannot open directory `{}`: {e}", spec.prefix, spec.directory))?;
        if !root.is_dir() {
            return Err(format!("static files at {}: `{}` is not a directory", spec.prefix, spec.directory));
        }
        Ok(StaticDir { root, spec: spec.clone() })
    }

    pub(crate) fn prefix(&self) -> &str {
        &self.spec.prefix
    }

    /// The service for this directory; `next` answers what it has no file for (for a
    /// directory served at `/`, the app's own not-found path). With `labeled` (the metrics are
    /// on), what the mount answers itself is counted under `{prefix}/{*path}`, as a route is
    /// under its template; what it passes on to `next` keeps the label `next` gives it, and a
    /// 404 of its own (a path it refuses) is unmatched too.
    pub(crate) fn service<F>(&self, next: F, labeled: bool) -> axum::routing::MethodRouter
    where
        F: tower::Service<Request<Body>, Response = Response<Body>, Error = Infallible> + Clone + Send + Sync + 'static,
        F::Future: Send + 'static,
    {
        let confined = Confined { root: self.root.clone(), dotfiles: self.spec.dotfiles, follow_symlinks: self.spec.follow_symlinks };
        let mut dir = ServeDir::with_backend(&self.root, confined).append_index_html_on_directories(self.spec.index);
        if self.spec.precompressed {
            dir = dir.precompressed_br().precompressed_gzip();
        }
        let next = tower::ServiceExt::map_response(next, |mut response: Response<Body>| {
            response.extensions_mut().insert(PassedOn);
            response
        });
        let dir = dir.fallback(next);
        let cache_control = self.spec.cache_control.as_deref().and_then(|v| HeaderValue::from_str(v).ok());
        let index = self.spec.index;
        let label: Option<std::sync::Arc<str>> = labeled.then(|| format!("{}/{{*path}}", self.spec.prefix.trim_end_matches('/')).into());
        axum::routing::any_service(tower::service_fn(move |request: Request<Body>| {
            let (mut dir, cache_control, label) = (dir.clone(), cache_control.clone(), label.clone());
            async move {
                let mut response = answer(&mut dir, request, cache_control, index).await;
                // A path the mount refuses (`..`, a hidden file) is no file, as a missing one is:
                // both are counted as unmatched.
                if response.extensions_mut().remove::<PassedOn>().is_none() && response.status() != StatusCode::NOT_FOUND {
                    if let Some(label) = label {
                        response.extensions_mut().insert(crate::middleware::RouteLabel(label));
                    }
                }
                Ok::<_, Infallible>(response)
            }
        }))
    }
}

/// Marks what a mount handed to its `next` service (no file was there), so the mount does not
/// label it as its own.
#[derive(Clone, Copy)]
struct PassedOn;

/// Answers one request: refused, a file, or the core's problem for what is not one.
async fn answer<F>(dir: &mut ServeDir<F, Confined>, request: Request<Body>, cache_control: Option<HeaderValue>, index: bool) -> Response<Body>
where
    F: tower::Service<Request<Body>, Response = Response<Body>, Error = Infallible> + Clone + Send + 'static,
    F::Future: Send + 'static,
{
    if is_traversal(request.uri().path()) {
        return not_found();
    }
    // `ServeDir` sees the path below the mount (axum strips the prefix), so a redirect it
    // writes would leave the mount; the client's own path is what a redirect must extend.
    let asked = request.extensions().get::<axum::extract::OriginalUri>().map_or_else(|| request.uri().clone(), |original| original.0.clone());
    let readable = request.method() == Method::GET || request.method() == Method::HEAD;
    if index && readable && request.uri().path() == "/" && !asked.path().ends_with('/') {
        // The mount itself, asked without its slash: its index's relative links would resolve
        // against the parent, so send the client to the directory, as for any subdirectory.
        return with_slash(&asked);
    }
    let below = format!("{}/", request.uri().path());
    let mut response = served(request, |request| dir.try_call(request), not_found).await;
    if let Some(value) = cache_control.filter(|_| response.status().is_success() || response.status() == StatusCode::NOT_MODIFIED) {
        response.headers_mut().insert(header::CACHE_CONTROL, value);
    }
    // `ServeDir`'s redirect of a directory to its slash names the path below the mount.
    if response.status().is_redirection() && response.headers().get(header::LOCATION).is_some_and(|location| location.as_bytes().starts_with(below.as_bytes())) {
        if let Some(location) = with_slash(&asked).headers_mut().remove(header::LOCATION) {
            response.headers_mut().insert(header::LOCATION, location);
        }
    }
    response
}

/// A 307 to `asked` with a slash after its path (its query kept), as `ServeDir` redirects a
/// directory asked for without one.
fn with_slash(asked: &http::Uri) -> Response<Body> {
    let location = match asked.query() {
        Some(query) => format!("{}/?{query}", asked.path()),
        None => format!("{}/", asked.path()),
    };
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::TEMPORARY_REDIRECT;
    if let Ok(location) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

fn not_found() -> Response<Body> {
    Problem::status(StatusCode::NOT_FOUND).with_detail("No file at this path.").into_http()
}

/// Whether `path` (as sent, percent-encoded) climbs out of the directory or hides a separator:
/// a `..` segment, a backslash or a NUL, once decoded (any number of times: `%252e%252e` too).
pub(crate) fn is_traversal(path: &str) -> bool {
    let mut text = path.to_owned();
    for _ in 0..4 {
        if text.contains(['\\', '\0']) || text.split('/').any(|segment| segment == "..") {
            return true;
        }
        let decoded = percent_encoding::percent_decode_str(&text).decode_utf8_lossy().into_owned();
        if decoded == text {
            return false;
        }
        text = decoded;
    }
    true
}

/// The files of one directory and nothing else: each path is resolved to its real path
/// (symlinks followed) and refused unless it is inside the directory — and, unless dotfiles
/// are served, unless no part of it below the directory starts with `.`.
#[derive(Clone)]
pub(crate) struct Confined {
    root: PathBuf,
    dotfiles: bool,
    follow_symlinks: bool,
}

impl Confined {
    async fn resolve(self, path: PathBuf) -> io::Result<PathBuf> {
        // Hidden parts are judged on the path as asked for (`ServeDir` has already refused
        // `..` in it), so a symlink cannot launder a `.git` either way.
        let asked = path.strip_prefix(&self.root).unwrap_or(&path);
        if !self.dotfiles && hidden(asked) {
            return Err(io::ErrorKind::NotFound.into());
        }
        // A path the file system cannot resolve (missing, too long, through a file, a loop)
        // names no file to serve.
        let real = tokio::fs::canonicalize(&path).await.map_err(|_| io::Error::from(io::ErrorKind::NotFound))?;
        match real.strip_prefix(&self.root) {
            Ok(inside) if !self.dotfiles && hidden(inside) => Err(io::ErrorKind::NotFound.into()),
            Ok(_) => Ok(real),
            Err(_) if self.follow_symlinks => Ok(real),
            Err(_) => Err(io::ErrorKind::NotFound.into()),
        }
    }
}

fn hidden(path: &Path) -> bool {
    path.components().any(|c| matches!(c, Component::Normal(part) if part.to_string_lossy().starts_with('.')))
}

type Boxed<T> = Pin<Box<dyn Future<Output = io::Result<T>> + Send>>;

impl Backend for Confined {
    type File = <TokioBackend as Backend>::File;
    type Metadata = <TokioBackend as Backend>::Metadata;
    type OpenFuture = Boxed<Self::File>;
    type MetadataFuture = Boxed<Self::Metadata>;

    fn open(&self, path: PathBuf) -> Self::OpenFuture {
        let confined = self.clone();
        Box::pin(async move { TokioBackend.open(confined.resolve(path).await?).await })
    }

    fn metadata(&self, path: PathBuf) -> Self::MetadataFuture {
        let confined = self.clone();
        Box::pin(async move { TokioBackend.metadata(confined.resolve(path).await?).await })
    }
}

mod served;
pub(crate) mod file_answer;
use served::served;

#[cfg(test)]
mod tests;

/// A directory of one test's own, removed when the test ends: under Bazel in its
/// `TEST_TMPDIR`, elsewhere in the system's temporary directory, where `cargo test` had left
/// some forty directories per run.
#[cfg(test)]
pub(crate) struct ScratchDir(std::path::PathBuf);

#[cfg(test)]
impl ScratchDir {
    pub(crate) fn new(name: &str) -> ScratchDir {
        let base = std::env::var_os("TEST_TMPDIR").map(std::path::PathBuf::from).unwrap_or_else(std::env::temp_dir);
        let dir = base.join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        ScratchDir(dir)
    }
}

#[cfg(test)]
impl std::ops::Deref for ScratchDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

#[cfg(test)]
impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
