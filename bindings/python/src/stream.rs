//! Streamed responses: the producers (`StreamingResponse` and `EventSourceResponse` contents)
//! the core pulls from, one item per pull.
//!
//! The core asks for the next item only when the client has taken the previous one (it reads
//! one item ahead), so a generator runs exactly as fast as its client reads. A sync iterator's
//! `next()` runs on the event loop's thread, as a `def` handler does; an async iterator's
//! `__anext__()` runs as a task on the loop (`ferrule.server.pull_next`). A client that leaves
//! closes the producer: `close()` for a generator, the pending task cancelled or `aclose()`
//! for an async one, so its `finally` blocks run as they would under Starlette.

use crate::convert::to_json;
use crate::route::PyRoute;
use ferrule_core::host::{HostRoute, Inbox, Pull, PullOutcome, PullReply, Pulled, Serving, StreamId};
use ferrule_core::stream::{BodyStream, Event};
use ferrule_core::bytes::Bytes;
use ferrule_core::HandlerError;
use pyo3::exceptions::{PyStopAsyncIteration, PyStopIteration};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

type Route = Arc<HostRoute<PyRoute>>;

/// The producers of one app's streams in progress, by the id the core pulls them with.
#[derive(Default)]
pub struct Streams {
    producers: Mutex<HashMap<StreamId, Producer>>,
    next_id: AtomicU64,
}

struct Producer {
    iterator: Py<PyAny>,
    is_async: bool,
    events: bool,
    route: Route,
    /// The task awaiting an async producer's next item, cancelled if the client leaves.
    task: Option<Py<PyAny>>,
}

impl Streams {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<StreamId, Producer>> {
        self.producers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes `content` (an iterable or async iterable) as a new stream's producer; the
    /// returned body pulls from it through `inbox`.
    pub fn start(&self, inbox: &Inbox<PyRoute>, route: &Route, content: &Bound<'_, PyAny>, events: bool) -> Result<BodyStream, String> {
        let py = content.py();
        let is_async = content.hasattr(pyo3::intern!(py, "__aiter__")).unwrap_or(false);
        let iterator = if is_async {
            content.call_method0(pyo3::intern!(py, "__aiter__"))
        } else {
            content.try_iter().map(Bound::into_any)
        }
        .map_err(|_| format!("a streamed response's content must be an iterable or async iterable, not {}", type_name(content)))?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let producer = Producer { iterator: iterator.unbind(), is_async, events, route: route.clone(), task: None };
        self.lock().insert(id, producer);
        Ok(inbox.stream(id))
    }

    /// The core wants stream `pull.stream`'s next item.
    pub fn pull(self: &Arc<Self>, py: Python<'_>, serving: &Arc<Serving<PyRoute>>, pull: Pull) {
        let Some((iterator, is_async, events, route)) = self.lock().get(&pull.stream).map(|p| (p.iterator.clone_ref(py), p.is_async, p.events, p.route.clone())) else {
            // Released already (the client left while this pull was on its way).
            return;
        };
        if pull.is_abandoned() {
            return; // its Release follows
        }
        if is_async {
            return self.schedule(py, serving, pull, iterator, events, route);
        }
        let item = iterator.bind(py).call_method0(pyo3::intern!(py, "__next__"));
        let outcome = match item {
            Ok(item) => chunk(&item, events).map(|chunk| Pulled { chunks: vec![chunk], end: false }).map_err(|message| self.unsendable(py, pull.stream, message)),
            Err(error) if error.is_instance_of::<PyStopIteration>(py) => {
                self.lock().remove(&pull.stream);
                Ok(Pulled { chunks: Vec::new(), end: true })
            }
            Err(error) => Err(self.raised(py, pull.stream, &route, error)),
        };
        serving.answer_pull(pull.reply, outcome);
    }

    /// Starts a task on the loop that awaits the async producer's next item.
    fn schedule(self: &Arc<Self>, py: Python<'_>, serving: &Arc<Serving<PyRoute>>, pull: Pull, iterator: Py<PyAny>, events: bool, route: Route) {
        let id = pull.stream;
        let pending = PendingPull { id, events, route, iterator, streams: self.clone(), serving: serving.clone(), reply: Mutex::new(Some(pull.reply)) };
        // If this fails before the pull is a Python object, dropping it drops the reply,
        // which the stream sees as a failed producer.
        let Ok(pending) = Bound::new(py, pending) else { return };
        let task = PULL_NEXT
            .import(py, "ferrule.server", "pull_next")
            .and_then(|pull_next| pull_next.call1((&pending,)))
            .and_then(|coroutine| create_task(py, &coroutine));
        match task {
            Ok(task) => {
                if let Some(producer) = self.lock().get_mut(&id) {
                    producer.task = Some(task.unbind());
                }
            }
            Err(error) => pending.get().answer(py, Err(error)),
        }
    }

    /// The client left before the stream's end: close its producer.
    pub fn release(&self, py: Python<'_>, id: StreamId) {
        let Some(producer) = self.lock().remove(&id) else { return };
        let iterator = producer.iterator.bind(py);
        let closed = if let Some(task) = producer.task {
            // Cancelling the task that awaits `__anext__()` throws into the generator: its
            // `finally` runs and it is closed.
            task.bind(py).call_method0(pyo3::intern!(py, "cancel")).map(drop)
        } else if producer.is_async {
            match iterator.getattr(pyo3::intern!(py, "aclose")) {
                Ok(aclose) => aclose.call0().and_then(|coroutine| create_task(py, &coroutine)).map(drop),
                Err(_) => Ok(()),
            }
        } else {
            match iterator.getattr(pyo3::intern!(py, "close")) {
                Ok(close) => close.call0().map(drop),
                Err(_) => Ok(()),
            }
        };
        if let Err(error) = closed {
            log_raised(py, &producer.route, error);
        }
    }

    /// The producer raised: logged with its traceback, and forgotten.
    fn raised(&self, py: Python<'_>, id: StreamId, route: &Route, error: PyErr) -> HandlerError {
        self.lock().remove(&id);
        let kind = error.get_type(py).name().map(|n| n.to_string()).unwrap_or_default();
        log_raised(py, route, error);
        HandlerError::new(format!("{kind} raised"))
    }

    /// The producer gave an item that cannot be sent: closed, as a leaving client would
    /// close it, and forgotten.
    fn unsendable(&self, py: Python<'_>, id: StreamId, message: String) -> HandlerError {
        self.release(py, id);
        HandlerError::new(format!("produced an item that cannot be sent: {message}"))
    }
}

static PULL_NEXT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static START_TASK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `asyncio.get_running_loop().create_task(coroutine)` on the loop this thread runs.
fn create_task<'py>(py: Python<'py>, coroutine: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    START_TASK.import(py, "ferrule.server", "start_task")?.call1((coroutine,))
}

fn log_raised(py: Python<'_>, route: &Route, error: PyErr) {
    static HANDLER_RAISED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let logged = HANDLER_RAISED
        .import(py, "ferrule._logging", "handler_raised")
        .and_then(|log| log.call1((route.label.as_str(), error.value(py))));
    if logged.is_err() {
        error.display(py);
    }
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

/// One item as the bytes the core sends: `bytes`-like or `str` for a byte stream; for an
/// event stream a `ServerSentEvent`, a dict of its fields, or data (`str`, else JSON).
fn chunk(item: &Bound<'_, PyAny>, events: bool) -> Result<Bytes, String> {
    if events {
        return event(item)?.encode().map_err(|e| e.to_string());
    }
    if let Ok(bytes) = item.cast::<PyBytes>() {
        Ok(Bytes::copy_from_slice(bytes.as_bytes()))
    } else if let Ok(text) = item.cast::<PyString>() {
        Ok(Bytes::copy_from_slice(text.to_str().map_err(|e| e.to_string())?.as_bytes()))
    } else if let Ok(bytes) = item.cast::<PyByteArray>() {
        Ok(Bytes::from(bytes.to_vec()))
    } else if item.is_instance_of::<PyMemoryView>() {
        let bytes: Vec<u8> = item.call_method0("tobytes").and_then(|b| b.extract()).map_err(|e| e.to_string())?;
        Ok(Bytes::from(bytes))
    } else {
        Err(format!("a stream's items must be bytes or str, not {}", type_name(item)))
    }
}

fn event(item: &Bound<'_, PyAny>) -> Result<Event, String> {
    let py = item.py();
    if let Ok(text) = item.cast::<PyString>() {
        return Ok(Event::data(text.to_str().map_err(|e| e.to_string())?));
    }
    let field = |name: &str| -> Result<Option<Bound<'_, PyAny>>, String> {
        let value = match item.cast::<PyDict>() {
            Ok(dict) => dict.get_item(name).map_err(|e| e.to_string())?,
            Err(_) => Some(item.getattr(name).map_err(|e| e.to_string())?),
        };
        Ok(value.filter(|v| !v.is_none()))
    };
    let is_event = item.cast::<PyDict>().is_ok() || item.hasattr(pyo3::intern!(py, "__ferrule_event__")).unwrap_or(false);
    if !is_event {
        return Ok(Event::data(data_text(item)?));
    }
    let text = |value: Bound<'_, PyAny>, what: &str| value.extract::<String>().map_err(|_| format!("an event's {what} must be a str"));
    let mut event = Event::default();
    if let Some(data) = field("data")? {
        event = event.with_data(data_text(&data)?);
    }
    if let Some(name) = field("event")? {
        event = event.with_name(text(name, "event")?);
    }
    if let Some(id) = field("id")? {
        event = event.with_id(match id.extract::<i64>() {
            Ok(number) => number.to_string(),
            Err(_) => text(id, "id")?,
        });
    }
    if let Some(retry) = field("retry")? {
        let ms: u64 = retry.extract().map_err(|_| "an event's retry must be a whole number of milliseconds".to_owned())?;
        event = event.with_retry(std::time::Duration::from_millis(ms));
    }
    if let Some(comment) = field("comment")? {
        event = event.with_comment(text(comment, "comment")?);
    }
    Ok(event)
}

/// An event's data: a `str` as it is, anything else as JSON.
fn data_text(data: &Bound<'_, PyAny>) -> Result<String, String> {
    if let Ok(text) = data.cast::<PyString>() {
        return Ok(text.to_str().map_err(|e| e.to_string())?.to_owned());
    }
    String::from_utf8(to_json::to_vec(data)?).map_err(|e| e.to_string())
}

/// One pull of an async producer, driven by `ferrule.server.pull_next`: `next()` is the
/// awaitable of its next item; `send(item)`, `end()` or `fail(exception)` answers the core.
#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct PendingPull {
    id: StreamId,
    events: bool,
    route: Route,
    iterator: Py<PyAny>,
    streams: Arc<Streams>,
    serving: Arc<Serving<PyRoute>>,
    reply: Mutex<Option<PullReply>>,
}

#[pymethods]
impl PendingPull {
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.iterator.bind(py).call_method0(pyo3::intern!(py, "__anext__"))
    }

    fn send(&self, py: Python<'_>, item: &Bound<'_, PyAny>) {
        let outcome = chunk(item, self.events).map(|chunk| Pulled { chunks: vec![chunk], end: false });
        let outcome = outcome.map_err(|message| {
            self.clear_task();
            self.streams.unsendable(py, self.id, message)
        });
        self.finish(outcome);
    }

    fn end(&self) {
        self.streams.lock().remove(&self.id);
        self.finish(Ok(Pulled { chunks: Vec::new(), end: true }));
    }

    fn fail(&self, py: Python<'_>, exception: &Bound<'_, PyAny>) {
        self.answer(py, Err(PyErr::from_value(exception.clone())));
    }
}

impl PendingPull {
    fn answer(&self, py: Python<'_>, outcome: PyResult<()>) {
        match outcome {
            Ok(()) => {}
            Err(error) if error.is_instance_of::<PyStopAsyncIteration>(py) => self.end(),
            Err(error) => {
                let failure = self.streams.raised(py, self.id, &self.route, error);
                self.finish(Err(failure));
            }
        }
    }

    /// This pull's task is ending: a later release closes the generator with `aclose()`.
    fn clear_task(&self) {
        if let Some(producer) = self.streams.lock().get_mut(&self.id) {
            producer.task = None;
        }
    }

    fn finish(&self, outcome: PullOutcome) {
        self.clear_task();
        let Some(reply) = self.reply.lock().unwrap_or_else(|p| p.into_inner()).take() else { return };
        self.serving.answer_pull(reply, outcome);
        self.serving.flush();
    }
}
