//! Streamed responses: the producers (`StreamingResponse` and `EventSourceResponse` contents)
//! the core pulls from.
//!
//! Every producer pushes ([`StreamSink`]) into the stream's `PushBuffer` (the core's meeting
//! point of pushes and pulls): a pull takes what was pushed in one crossing, or waits for the
//! next push; a full batch makes the producer wait until a pull has taken it, so it runs at most
//! one batch ahead of its client; nothing ready is ever held back.
//! * An async iterator runs as a task on the loop (`ferrule.server.produce`).
//! * A sync iterator runs in batches on a bounded pool of threads
//!   (`ferrule.server.produce_in_pool`), as Starlette runs one in its thread pool: a
//!   generator that blocks (a queue, a file, a socket) holds up neither the event loop nor
//!   other streams; between batches its task waits on the loop, holding no thread.
//!
//! A client that leaves closes the producer: an async one's task is cancelled (the cancellation
//! is thrown into the generator where it waits, its `finally` runs, then `aclose()`); a sync
//! one finds the stream gone at its next push or wait for room, and closes the generator.

use crate::convert::to_json;
use crate::dispatch::RaisedSlot;
use crate::handler_task::TaskStarter;
use crate::route::PyRoute;
use ferrule_core::bytes::Bytes;
use ferrule_core::host::{HostRoute, Inbox, Pull, PushBuffer, StreamId};
use ferrule_core::stream::{BodyStream, Event};
use ferrule_core::HandlerError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

type Route = Arc<HostRoute<PyRoute>>;

/// The producers of one app's streams in progress, by the id the core pulls them with.
#[derive(Default)]
pub struct Streams {
    producers: Mutex<HashMap<StreamId, Producer>>,
    next_id: AtomicU64,
}

struct Producer {
    route: Route,
    pushed: Pushed,
}

/// Where a producer and the pulls meet.
struct Pushed {
    /// An async producer's task (cancelled when the client leaves; a sync producer's is not,
    /// see `ferrule.server.produce_in_pool`).
    task: Option<Py<PyAny>>,
    buffer: PushBuffer,
    /// A producer's future for room in a full batch, resolved when a pull takes it or the
    /// client leaves.
    room: Option<Py<PyAny>>,
}

impl Streams {
    fn lock(&self) -> MutexGuard<'_, HashMap<StreamId, Producer>> {
        self.producers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes `content` (an iterable or async iterable) as a new stream's producer; the
    /// returned body pulls from it through `inbox`.
    pub fn start(
        self: &Arc<Self>,
        inbox: &Inbox<PyRoute>,
        tasks: &TaskStarter,
        route: &Route,
        content: &Bound<'_, PyAny>,
        events: bool,
        raised: Option<RaisedSlot>,
    ) -> Result<BodyStream, String> {
        let py = content.py();
        let is_async = content.hasattr(pyo3::intern!(py, "__aiter__")).unwrap_or(false);
        let iterator = if is_async {
            content.call_method0(pyo3::intern!(py, "__aiter__"))
        } else {
            content.try_iter().map(Bound::into_any)
        }
        .map_err(|_| format!("a streamed response's content must be an iterable or async iterable, not {}", type_name(content)))?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let pushed = Pushed { task: None, buffer: PushBuffer::default(), room: None };
        self.lock().insert(id, Producer { route: route.clone(), pushed });
        let sink = Bound::new(py, StreamSink { id, events, iterator: iterator.unbind(), streams: self.clone(), inbox: inbox.clone(), raised });
        let producer = if is_async { PRODUCE.import(py, "ferrule.server", "produce") } else { PRODUCE_IN_POOL.import(py, "ferrule.server", "produce_in_pool") };
        let started = sink
            .and_then(|sink| producer?.call1((sink,)))
            .and_then(|coroutine| tasks.start(coroutine, &route.data.task_name(py, &route.label)))
            .map(|task| {
                if is_async {
                    if let Some(producer) = self.lock().get_mut(&id) {
                        producer.pushed.task = Some(task.unbind());
                    }
                }
            });
        if let Err(error) = started {
            self.lock().remove(&id);
            return Err(format!("cannot start the stream's producer: {error}"));
        }
        Ok(inbox.stream(id))
    }

    /// The core wants stream `pull.stream`'s next items.
    pub fn pull(&self, py: Python<'_>, inbox: &Inbox<PyRoute>, pull: Pull) {
        let id = pull.stream;
        let mut producers = self.lock();
        let Some(producer) = producers.get_mut(&id) else {
            // Released already (the client left while this pull was on its way).
            return;
        };
        if pull.is_abandoned() {
            return; // its Release follows
        }
        let Some((reply, outcome)) = producer.pushed.buffer.pull(pull.reply) else { return };
        // The batch is taken: a producer waiting for room may go on.
        producer.pushed.make_room(py);
        if PushBuffer::is_last(&outcome) {
            producers.remove(&id);
        }
        drop(producers);
        inbox.answer_pull(reply, outcome);
    }

    /// The client left before the stream's end: close its producer.
    pub fn release(&self, py: Python<'_>, id: StreamId) {
        let Some(mut producer) = self.lock().remove(&id) else { return };
        // A producer waiting for room wakes and finds the stream gone.
        producer.pushed.make_room(py);
        // Cancelling the task throws into the generator where it waits: its `finally` runs,
        // and `ferrule.server.produce` closes it.
        if let Some(task) = producer.pushed.task {
            if let Err(error) = task.bind(py).call_method0(pyo3::intern!(py, "cancel")) {
                log_raised(py, &producer.route, error);
            }
        }
    }
}

impl Pushed {
    fn make_room(&mut self, py: Python<'_>) {
        if let Some(room) = self.room.take() {
            let room = room.bind(py);
            if !room.call_method0(pyo3::intern!(py, "done")).and_then(|d| d.is_truthy()).unwrap_or(true) {
                let _ = room.call_method1(pyo3::intern!(py, "set_result"), (py.None(),));
            }
        }
    }
}

fn raised(py: Python<'_>, route: &Route, error: PyErr) -> HandlerError {
    let kind = error.get_type(py).name().map(|n| n.to_string()).unwrap_or_default();
    log_raised(py, route, error);
    HandlerError::new(format!("{kind} raised"))
}

static PRODUCE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static PRODUCE_IN_POOL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

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
    if let Ok(dict) = item.cast::<PyDict>() {
        for key in dict.keys() {
            let name = key.cast::<PyString>().map_err(|_| format!("an event's field names are str, not {}", type_name(&key)))?;
            if let Some(error) = ferrule_core::stream::unknown_field(name.to_str().map_err(|e| e.to_string())?) {
                return Err(error);
            }
        }
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
    String::from_utf8(to_json::to_vec(data, ferrule_core::shape::Shape::any())?).map_err(|e| e.to_string())
}

/// The pushing end of an async producer's stream, driven by `ferrule.server.produce`:
/// `push(item)` for each item (false: the batch is full, await `room()`), then `finish()` or
/// `fail(exception)`.
#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct StreamSink {
    id: StreamId,
    events: bool,
    iterator: Py<PyAny>,
    streams: Arc<Streams>,
    inbox: Inbox<PyRoute>,
    /// An in-process client's: where the producer's exception goes, for its test to raise.
    raised: Option<RaisedSlot>,
}

#[pymethods]
impl StreamSink {
    /// The async iterator the task runs.
    #[getter]
    fn iterator(&self, py: Python<'_>) -> Py<PyAny> {
        self.iterator.clone_ref(py)
    }

    /// Hands `item` to a waiting pull, or keeps it for the next; returns whether the batch has
    /// room for another. Raises `TypeError` for an item that cannot be sent.
    fn push(&self, item: &Bound<'_, PyAny>) -> PyResult<bool> {
        let chunk = chunk(item, self.events).map_err(|m| pyo3::exceptions::PyTypeError::new_err(format!("produced an item that cannot be sent: {m}")))?;
        let mut producers = self.streams.lock();
        let Some(pushed) = producers.get_mut(&self.id).map(|p| &mut p.pushed) else {
            return Ok(false); // released: the producer stops (a task is being cancelled)
        };
        let answer = pushed.buffer.push(chunk);
        let room = pushed.buffer.has_room();
        drop(producers);
        if let Some((reply, outcome)) = answer {
            self.inbox.answer_pull(reply, outcome);
            self.inbox.flush();
        }
        Ok(room)
    }

    /// Whether the stream is still wanted (false once the client has left).
    #[getter]
    fn open(&self) -> bool {
        self.streams.lock().contains_key(&self.id)
    }

    /// A future that resolves once a pull has taken the batch (at once if it has room).
    fn room(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let future = py.import("asyncio")?.call_method0("get_running_loop")?.call_method0("create_future")?;
        let mut producers = self.streams.lock();
        match producers.get_mut(&self.id).map(|p| &mut p.pushed) {
            Some(pushed) if !pushed.buffer.has_room() => pushed.room = Some(future.clone().unbind()),
            _ => {
                future.call_method1("set_result", (py.None(),))?;
            }
        }
        Ok(future.unbind())
    }

    /// The producer is done: the response ends once the batch has gone.
    fn finish(&self) {
        self.end(Ok(()));
    }

    /// The producer raised: logged with its traceback; the response is cut off (an event
    /// stream ends) once what it pushed before has gone.
    fn fail(&self, py: Python<'_>, exception: &Bound<'_, PyAny>) {
        let route = self.streams.lock().get(&self.id).map(|p| p.route.clone());
        let failure = match route {
            Some(route) => raised(py, &route, PyErr::from_value(exception.clone())),
            None => return,
        };
        if let Some(slot) = &self.raised {
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(exception.clone().unbind());
        }
        self.end(Err(failure));
    }
}

impl StreamSink {
    fn end(&self, how: Result<(), HandlerError>) {
        let mut producers = self.streams.lock();
        let Some(pushed) = producers.get_mut(&self.id).map(|p| &mut p.pushed) else { return };
        pushed.task = None;
        let Some((reply, outcome)) = pushed.buffer.end(how) else { return };
        if PushBuffer::is_last(&outcome) {
            producers.remove(&self.id);
        }
        drop(producers);
        self.inbox.answer_pull(reply, outcome);
        self.inbox.flush();
    }
}
