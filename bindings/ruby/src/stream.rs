//! Streamed bodies: a Rack body's `each`, an Enumerator, `stream { |out| }` and
//! `sse { |out| }`.
//!
//! Ruby bodies push (`each` yields), while the core pulls (it asks for more when the client
//! has taken what came before). Here they meet. Each streamed body runs on a Ruby thread of its
//! own (`Ferrule::Streaming.start`), so a long stream never occupies a worker that serves
//! requests. It writes each chunk to a [`StreamOut`], which converts it with the GVL held and
//! pushes it into the stream's `PushBuffer` (the core's meeting point of pushes and pulls): to a
//! pull that waits at once, or kept for the next pull, which takes the whole batch in one
//! crossing. Only a full batch makes a write wait, with the GVL released, until a worker hands
//! over the core's pull ([`Streams::pulled`]): the producer runs at most one batch ahead of its
//! client. A client that leaves wakes the wait with "gone" and the write returns false.

use crate::app::RbRoute;
use crate::raw::{self, without_gvl};
use crate::to_json;
use ferrule_core::bytes::Bytes;
use ferrule_core::host::{InProcess, Inbox, Pull, PushAnswer, PushBuffer, Serving, StreamId};
use ferrule_core::log::Logs;
use ferrule_core::stream::{BodyStream, Event};
use ferrule_core::HandlerError;
use magnus::{prelude::*, Error, RHash, RString, Ruby, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Where a stream's chunks are answered: a server's inbox, or an in-process one.
pub trait Answers: Send + Sync + 'static {
    fn inbox(&self) -> &Inbox<RbRoute>;
}

impl Answers for Serving<RbRoute> {
    fn inbox(&self) -> &Inbox<RbRoute> {
        self
    }
}

impl Answers for InProcess<RbRoute> {
    fn inbox(&self) -> &Inbox<RbRoute> {
        self
    }
}

/// The streams in progress, by the id the core pulls them with.
#[derive(Default)]
pub struct Streams {
    slots: Mutex<HashMap<StreamId, Arc<Slot>>>,
    next_id: AtomicU64,
}

/// Where a stream's producer thread and the workers meet.
struct Slot {
    state: Mutex<SlotState>,
    changed: Condvar,
    answers: Arc<dyn Answers>,
}

#[derive(Default)]
struct SlotState {
    buffer: PushBuffer,
    /// The client left.
    gone: bool,
}

impl Slot {
    fn lock(&self) -> MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Blocks until the batch has room (a pull took it), the client has gone, or
    /// `interrupted` is set.
    fn wait_for_room(&self, interrupted: &AtomicBool) {
        let mut state = self.lock();
        while !state.buffer.has_room() && !state.gone && !interrupted.load(Ordering::Acquire) {
            state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Sends an answer from the producer's thread (a worker's answers go with its batch's flush).
    fn answer(&self, (reply, outcome): PushAnswer) {
        let inbox = self.answers.inbox();
        inbox.answer_pull(reply, outcome);
        inbox.flush();
    }
}

impl Streams {
    fn lock(&self) -> MutexGuard<'_, HashMap<StreamId, Arc<Slot>>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new stream answered through `answers`: the response's body, and the producer's end.
    pub fn open(self: &Arc<Self>, answers: Arc<dyn Answers>, events: bool, logs: Logs, label: &str) -> (BodyStream, StreamOut) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = answers.inbox().stream(id);
        let slot = Arc::new(Slot { state: Mutex::default(), changed: Condvar::new(), answers });
        self.lock().insert(id, slot.clone());
        let out = StreamOut { id, slot, streams: self.clone(), events, logs, label: label.to_owned() };
        (body, out)
    }

    /// A worker took the core's pull for a stream: what was written so far goes at once (the
    /// worker's flush sends it), or the pull waits for the producer's next write.
    pub fn pulled(&self, pull: Pull) {
        let Some(slot) = self.lock().get(&pull.stream).cloned() else { return };
        let answer = slot.lock().buffer.pull(pull.reply);
        let Some((reply, outcome)) = answer else { return };
        if PushBuffer::is_last(&outcome) {
            self.lock().remove(&pull.stream);
        }
        slot.answers.inbox().answer_pull(reply, outcome);
        // A producer waiting on a full batch may write again.
        slot.changed.notify_all();
    }

    /// The stream's client left: its producer's next write returns false.
    pub fn released(&self, id: StreamId) {
        let Some(slot) = self.lock().remove(&id) else { return };
        slot.lock().gone = true;
        slot.changed.notify_all();
    }
}

/// `Ferrule::StreamOut`: the core's end of one streamed body, written by its producer thread.
#[magnus::wrap(class = "Ferrule::StreamOut", free_immediately, size)]
pub struct StreamOut {
    id: StreamId,
    slot: Arc<Slot>,
    streams: Arc<Streams>,
    events: bool,
    logs: Logs,
    label: String,
}

impl StreamOut {
    /// `write(chunk)`: sends a chunk (a String; for an event stream an event Hash or data),
    /// waiting only while a whole batch waits for the client; false when the client has gone.
    pub fn write(ruby: &Ruby, rb_self: &Self, chunk: Value) -> Result<bool, Error> {
        let bytes = if rb_self.events { event(ruby, chunk) } else { bytes(chunk) }
            .map_err(|message| Error::new(ruby.exception_type_error(), format!("ferrule: {message}")))?;
        loop {
            let mut state = rb_self.slot.lock();
            if state.gone {
                return Ok(false);
            }
            if state.buffer.has_room() {
                let answer = state.buffer.push(bytes);
                drop(state);
                if let Some(answer) = answer {
                    rb_self.slot.answer(answer);
                }
                return Ok(true);
            }
            drop(state);
            rb_self.wait_for_room(ruby)?;
        }
    }

    /// `finish`: the producer is done; once what it wrote has gone, the response ends.
    pub fn finish(rb_self: &Self) -> Result<(), Error> {
        rb_self.last(Ok(()))
    }

    /// `fail(exception)`: the producer raised. Logged with its backtrace; once what it wrote
    /// before has gone, the response is cut off (an event stream ends).
    pub fn fail(rb_self: &Self, exception: magnus::Exception) -> Result<(), Error> {
        let label = &rb_self.label;
        rb_self.logs.handler_failed(label, &format!("{label}: the stream raised {exception:#?}"));
        let class = raw::class_name(exception);
        rb_self.last(Err(HandlerError::new(format!("{class} raised by the stream"))))
    }

    /// The producer is done (`Ok`) or failed: sent after what it wrote, by this write's pull or
    /// a later one (the worker that takes it forgets the stream). Never waits.
    fn last(&self, how: Result<(), HandlerError>) -> Result<(), Error> {
        let answer = {
            let mut state = self.slot.lock();
            if state.gone {
                return Ok(());
            }
            state.buffer.end(how)
        };
        if let Some(answer) = answer {
            if PushBuffer::is_last(&answer.1) {
                self.streams.lock().remove(&self.id);
            }
            self.slot.answer(answer);
        }
        Ok(())
    }

    /// Waits, with the GVL released, until the batch has room or the client has gone. A
    /// `Thread#kill` or `Thread#raise` interrupts the wait and is raised here.
    fn wait_for_room(&self, ruby: &Ruby) -> Result<(), Error> {
        let interrupted = AtomicBool::new(false);
        without_gvl(ruby, || self.slot.wait_for_room(&interrupted), || {
            interrupted.store(true, Ordering::Release);
            let _state = self.slot.lock();
            self.slot.changed.notify_all();
        })?;
        ruby.thread_check_ints()
    }
}

fn bytes(chunk: Value) -> Result<Bytes, String> {
    let string = RString::from_value(chunk).ok_or_else(|| format!("a streamed body's chunks must be Strings, not {}", raw::class_name(chunk)))?;
    Ok(Bytes::from(raw::string_bytes(string)))
}

/// An event: a Hash of `data`, `event`, `id`, `retry`, `comment` (Symbol or String keys), or
/// plain data. Data is sent as it is when a String, else as JSON.
fn event(ruby: &Ruby, item: Value) -> Result<Bytes, String> {
    let Some(hash) = RHash::from_value(item) else {
        return Event::data(data_text(ruby, item)?).encode().map_err(|e| e.to_string());
    };
    let mut unknown = None;
    hash.foreach(|key: Value, _: Value| {
        let name: String = key.funcall("to_s", ())?;
        unknown = ferrule_core::stream::unknown_field(&name);
        Ok(if unknown.is_some() { magnus::r_hash::ForEach::Stop } else { magnus::r_hash::ForEach::Continue })
    })
    .map_err(|e| e.to_string())?;
    if let Some(error) = unknown {
        return Err(error);
    }
    let field = |name: &str| -> Option<Value> {
        let value = hash.get(ruby.to_symbol(name)).or_else(|| hash.get(name))?;
        (!value.is_nil()).then_some(value)
    };
    let text = |value: Value| -> Result<String, String> { value.funcall("to_s", ()).map_err(|e: Error| e.to_string()) };
    let mut event = Event::default();
    if let Some(data) = field("data") {
        event = event.with_data(data_text(ruby, data)?);
    }
    if let Some(name) = field("event") {
        event = event.with_name(text(name)?);
    }
    if let Some(id) = field("id") {
        event = event.with_id(text(id)?);
    }
    if let Some(retry) = field("retry") {
        let ms: u64 = magnus::TryConvert::try_convert(retry).map_err(|_| "an event's retry must be a whole number of milliseconds".to_owned())?;
        event = event.with_retry(std::time::Duration::from_millis(ms));
    }
    if let Some(comment) = field("comment") {
        event = event.with_comment(text(comment)?);
    }
    event.encode().map_err(|e| e.to_string())
}

fn data_text(ruby: &Ruby, data: Value) -> Result<String, String> {
    if let Some(string) = RString::from_value(data) {
        return raw::string_text(string).ok_or_else(|| "an event's data must be UTF-8 text".to_owned());
    }
    String::from_utf8(to_json::to_vec(ruby, data, ferrule_core::shape::Shape::any())?).map_err(|e| e.to_string())
}
