//! `ferrule.node`: the native addon of the `ferrule` npm package.
//!
//! The JavaScript side (index.js) turns route declarations into core `RouteSpec`s and calls
//! the handlers; everything else — HTTP, routing, parsing, coercion, validation, errors — is
//! the Rust core's. Requests reach JavaScript as objects built from Rust values; results are
//! serialised to bytes here, directly from the JavaScript values.

mod app;
mod raw;
mod shapes;
mod to_js;
mod to_json;

use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Rust's allocations in this addon (request parsing, JSON trees, response bytes).
#[global_allocator]
static ALLOCATOR: ferrule_core::Allocator = ferrule_core::Allocator;

/// The version of the Rust crates this addon was built from.
#[napi]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// The media type of Ferrule's error responses (from the shared core).
#[napi]
pub fn problem_json() -> String {
    ferrule_core::PROBLEM_JSON.to_string()
}

/// A listening socket for worker processes to inherit (`listen({ workers })`): bound once by
/// the primary, so a port in use is refused there, and never shared with another program.
#[napi]
pub fn bind_listener(host: String, port: u32) -> Result<i32> {
    use std::os::fd::IntoRawFd;
    let port = u16::try_from(port).map_err(|_| Error::new(Status::GenericFailure, format!("TypeError|ferrule: port {port} is not a TCP port (0-65535)")))?;
    let listener = ferrule_core::host::bind(&host, port).map_err(app::host_error)?;
    Ok(listener.into_raw_fd())
}

/// The core's message for an unknown option (`unknown route option bodyy (did you mean
/// body?)`), the same in every language.
#[napi]
pub fn unknown_option(what: String, name: String, known: Vec<String>) -> String {
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    ferrule_core::spec::unknown_option(&what, &name, &known)
}

/// The body of the core's problem response for `status` with `detail` (an `HttpError`'s, as
/// `onSend` hooks and error handlers see it); with no status, a failed handler's bare 500.
#[napi]
pub fn problem_body(status: Option<u32>, detail: Option<String>) -> Result<Buffer> {
    let problem = match status {
        None => ferrule_core::Problem::internal(),
        Some(status) => {
            let code = u16::try_from(status).ok().and_then(|s| ferrule_core::http::StatusCode::from_u16(s).ok());
            let code = code.ok_or_else(|| Error::new(Status::InvalidArg, format!("TypeError|ferrule: {status} is not an HTTP status")))?;
            let mut problem = ferrule_core::Problem::status(code);
            problem.detail = detail;
            problem
        }
    };
    Ok(problem.body().into())
}

/// `ferrule app.js --reload`: runs `command` and starts it again when a file ending in one of
/// `extensions` changes under `directories`; returns the exit status once SIGINT or SIGTERM
/// stopped it (see `ferrule_core::reload`). Blocks: the supervisor runs no JavaScript.
#[napi]
pub fn reload(command: Vec<String>, directories: Vec<String>, extensions: Vec<String>, debounce_ms: u32) -> Result<i32> {
    let spec = ferrule_core::reload::ReloadSpec {
        command,
        directories: directories.into_iter().map(std::path::PathBuf::from).collect(),
        extensions,
        debounce: std::time::Duration::from_millis(debounce_ms.into()),
        drain: std::time::Duration::from_secs(10),
    };
    // Node marks its standard streams close-on-exec (they are open: Node reopens any that
    // were closed at startup), so the app, inheriting them, started with none and everything
    // it printed went to /dev/null. This process only supervises from here on.
    for fd in 0..=2 {
        // SAFETY: fcntl on descriptors 0-2 of this process, which Node keeps open.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC != 0 {
                libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
            }
        }
    }
    ferrule_core::reload::supervise(spec).map_err(|e| Error::new(Status::GenericFailure, format!("Error|ferrule: {e}")))
}

/// The fields an event object may have (the core's list).
#[napi]
pub fn event_fields() -> Vec<String> {
    ferrule_core::stream::EVENT_FIELDS.iter().map(|name| (*name).to_owned()).collect()
}

/// The error for an event object's key that is no event field.
#[napi]
pub fn unknown_event_field(name: String) -> String {
    ferrule_core::stream::unknown_field(&name).unwrap_or_default()
}

/// The app settings the core knows (snake_case), which the App options map onto.
#[napi]
pub fn app_setting_names() -> Vec<String> {
    ferrule_core::spec::app_setting_names()
}
