//! `ferrule._ferrule`: the compiled half of the `ferrule` Python package.
//!
//! The Python side (`ferrule/`) reads handler signatures once and hands this module plain
//! route descriptions and call plans; from then on every request is parsed, validated and
//! turned into Python objects here, and every result is serialised here.

mod app;
mod convert;
mod dispatch;
mod handler_task;
mod in_process;
mod inline_run;
mod logs;
mod request;
mod request_context;
mod response;
mod route;
mod server;
mod socket;
mod stream;

use pyo3::prelude::*;

/// Rust's allocations in this module (request parsing, JSON trees, response bytes); Python's
/// own objects keep Python's allocator.
#[global_allocator]
static ALLOCATOR: ferrule_core::Allocator = ferrule_core::Allocator;

#[pymodule]
mod _ferrule {
    #[pymodule_export]
    use super::app::NativeApp;
    #[pymodule_export]
    use super::request::{Request, UploadFile};
    #[pymodule_export]
    use super::logs::LogDrain;
    #[pymodule_export]
    use super::server::ServerHandle;
    #[pymodule_export]
    use super::in_process::InProcessHandle;
    #[pymodule_export]
    use super::socket::NativeSocket;


    /// A path template in the core's spelling (`/users/:id` → `/users/{id}`).
    #[pyo3::pyfunction]
    fn normalize_path(path: &str) -> pyo3::PyResult<String> {
        ferrule_core::PathTemplate::normalize(path).map_err(pyo3::exceptions::PyValueError::new_err)
    }

    /// `uuid.UUID(value)`, parsed in Rust when it can be: a body's UUID fields.
    #[pyo3::pyfunction]
    fn uuid_from_text<'py>(value: &pyo3::Bound<'py, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::PyAny>> {
        super::convert::uuid::from_text(value)
    }

    /// `datetime.fromisoformat(value)`, with RFC 3339's `Z`/`z` read as `+00:00`: a body's
    /// date-time fields (what is not text goes to `fromisoformat` for its own error).
    #[pyo3::pyfunction]
    fn datetime_from_text<'py>(value: &pyo3::Bound<'py, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::PyAny>> {
        super::convert::iso_text::datetime_from_value(value)
    }

    /// The core's message for an unknown option, the same in every language.
    #[pyo3::pyfunction]
    fn unknown_option(what: &str, name: &str, known: Vec<String>) -> String {
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        ferrule_core::spec::unknown_option(what, name, &known)
    }

    /// The body of the problem response for `status` with `detail` (an `HTTPException`'s).
    #[pyo3::pyfunction]
    #[pyo3(signature = (status, detail = None))]
    fn problem_body<'py>(py: pyo3::Python<'py>, status: u16, detail: Option<pyo3::Bound<'py, pyo3::PyAny>>) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyBytes>> {
        let status = ferrule_core::http::StatusCode::from_u16(status).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        let mut problem = ferrule_core::Problem::status(status);
        let detail = match detail {
            Some(detail) => crate::response::Detail::of(&detail).map_err(pyo3::exceptions::PyTypeError::new_err)?,
            None => crate::response::Detail::Text(None),
        };
        let body = match detail {
            crate::response::Detail::Text(text) => {
                problem.detail = text;
                problem.body()
            }
            crate::response::Detail::Json(json) => problem.body_with_detail_json(&json),
        };
        Ok(pyo3::types::PyBytes::new(py, &body))
    }

    /// `value` as the JSON the core writes for a plain result with no response schema (a
    /// `Response` body read before it is sent, `Response.body_iterator`).
    #[pyo3::pyfunction]
    fn json_bytes<'py>(value: &pyo3::Bound<'py, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyBytes>> {
        let bytes = crate::response::json_of(None, value, 200).map_err(|message| pyo3::exceptions::PyValueError::new_err(format!("the response cannot be sent: {message}")))?;
        Ok(pyo3::types::PyBytes::new(value.py(), &bytes))
    }

    /// The `Content-Type` the core sends a `ferrule.Response` with when its headers name none
    /// (see `response::media_type_of`).
    #[pyo3::pyfunction]
    fn media_type_of(response: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<Option<String>> {
        crate::response::media_type_of(response)
    }

    /// `await request.form()` on a multipart body its route does not declare: the parts,
    /// each `(name, str | UploadFile)`, read by the core's parser within the default multipart
    /// limits (the body limit already bounds the bytes). A malformed body raises `ValueError`
    /// with the core's 400 detail. The parser waits on nothing (the bytes are all here), so
    /// one poll finishes it.
    #[pyo3::pyfunction]
    fn multipart_parts<'py>(py: pyo3::Python<'py>, content_type: &str, body: &[u8]) -> pyo3::PyResult<Vec<(String, pyo3::Bound<'py, pyo3::PyAny>)>> {
        use ferrule_core::params::RawValue;
        let config = ferrule_core::AppConfig::default();
        let parsing = ferrule_core::multipart_parts(content_type, ferrule_core::bytes::Bytes::copy_from_slice(body), &config);
        let mut parsing = std::pin::pin!(parsing);
        let std::task::Poll::Ready(parsed) = std::future::Future::poll(parsing.as_mut(), &mut std::task::Context::from_waker(std::task::Waker::noop())) else {
            return Err(pyo3::exceptions::PyRuntimeError::new_err("the multipart body was not read at once"));
        };
        let parts = parsed.map_err(|problem| pyo3::exceptions::PyValueError::new_err(problem.detail.unwrap_or_else(|| "Malformed multipart body.".into())))?;
        parts
            .iter()
            .map(|(name, value)| {
                let value = match value {
                    RawValue::Text(text) => pyo3::types::PyString::new(py, text).into_any(),
                    RawValue::Invalid(bytes) => pyo3::types::PyString::new(py, &String::from_utf8_lossy(bytes)).into_any(),
                    RawValue::File(file) => pyo3::Bound::new(py, crate::request::UploadFile::from(&**file))?.into_any(),
                };
                Ok((name.to_owned(), value))
            })
            .collect()
    }

    /// The body of the core's bare 500, for an answer Python makes in its place (an
    /// `on_send` hook's to see).
    #[pyo3::pyfunction]
    fn server_error_body(py: pyo3::Python<'_>) -> pyo3::Bound<'_, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, &ferrule_core::Problem::internal().body())
    }

    /// `--reload`: runs `command` (the app, served as without `--reload`) and starts it again
    /// when a file ending in one of `extensions` changes under `directories`; returns the exit
    /// status once SIGINT or SIGTERM stopped it (see `ferrule_core::reload`).
    #[pyo3::pyfunction]
    fn reload(py: pyo3::Python<'_>, command: Vec<String>, directories: Vec<std::path::PathBuf>, extensions: Vec<String>, debounce_ms: u64) -> pyo3::PyResult<i32> {
        let spec = ferrule_core::reload::ReloadSpec {
            command,
            directories,
            extensions,
            debounce: std::time::Duration::from_millis(debounce_ms),
            drain: std::time::Duration::from_secs(10),
        };
        py.detach(|| ferrule_core::reload::supervise(spec)).map_err(pyo3::exceptions::PyRuntimeError::new_err)
    }

    /// The app settings the core knows (the `App` keyword arguments).
    #[pyo3::pyfunction]
    fn app_setting_names() -> Vec<String> {
        ferrule_core::spec::app_setting_names()
    }

    #[allow(non_upper_case_globals)]
    #[pymodule_export]
    const __version__: &str = env!("CARGO_PKG_VERSION");
    #[pymodule_export]
    const PROBLEM_JSON: &str = ferrule_core::PROBLEM_JSON;
    #[pymodule_export]
    const VALIDATION_PROBLEM_TYPE: &str = ferrule_core::VALIDATION_PROBLEM_TYPE;
}
