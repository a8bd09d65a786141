//! One Server-Sent Event and its wire form (WHATWG HTML §9.2, "Server-sent events").
//!
//! Encoding is decided here once for every language: data is split on every line break (CRLF,
//! LF or CR) into one `data:` line each, so a client joins it back with `\n`; a name or id
//! that holds a line break (or an id that holds NUL, which clients ignore) cannot be sent and
//! is refused rather than split into a second field.

use bytes::Bytes;
use std::time::Duration;

/// An event: any of data, a name (`event:`), an id (`id:`, what a reconnecting client sends
/// back as `Last-Event-ID`), a reconnection delay (`retry:`) and a comment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    data: Option<String>,
    name: Option<String>,
    id: Option<String>,
    retry: Option<Duration>,
    comment: Option<String>,
}

/// The fields an event is given by, under these names in every language (a Python dict, a
/// JavaScript object, a Ruby Hash). Anything else under another name is refused by
/// [`unknown_field`], not dropped: `{"d": 1}` would otherwise be sent as an empty event and
/// its value lost (sse-starlette refuses it too, as `ServerSentEvent`'s unknown argument).
pub const EVENT_FIELDS: [&str; 5] = ["data", "event", "id", "retry", "comment"];

/// The error for an event given a field named `name` that is not one of [`EVENT_FIELDS`];
/// `None` for one that is.
pub fn unknown_field(name: &str) -> Option<String> {
    (!EVENT_FIELDS.contains(&name)).then(|| {
        format!("an event has no field {name:?} (its fields are data, event, id, retry and comment; to send a mapping as JSON, give it as data)")
    })
}

/// A field an event cannot carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidEvent(&'static str);

impl std::fmt::Display for InvalidEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for InvalidEvent {}

impl Event {
    /// An event carrying `data` (text; line breaks become separate `data:` lines).
    pub fn data(data: impl Into<String>) -> Self {
        Event { data: Some(data.into()), ..Event::default() }
    }

    /// A comment only: clients ignore it; it keeps idle connections and proxies awake.
    pub fn comment(text: impl Into<String>) -> Self {
        Event { comment: Some(text.into()), ..Event::default() }
    }

    pub fn with_data(mut self, data: impl Into<String>) -> Self {
        self.data = Some(data.into());
        self
    }

    /// The event's type (`event:`); a client's `addEventListener(name, ...)` receives it.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// How long a client waits before reconnecting after the stream ends.
    pub fn with_retry(mut self, retry: Duration) -> Self {
        self.retry = Some(retry);
        self
    }

    pub fn with_comment(mut self, text: impl Into<String>) -> Self {
        self.comment = Some(text.into());
        self
    }

    /// The event's bytes, ending with the blank line that dispatches it.
    pub fn encode(&self) -> Result<Bytes, InvalidEvent> {
        let mut out = String::with_capacity(self.data.as_ref().map_or(0, |d| d.len()) + 16);
        if let Some(comment) = &self.comment {
            for line in lines(comment) {
                out.push(':');
                if !line.is_empty() {
                    out.push(' ');
                    out.push_str(line);
                }
                out.push('\n');
            }
        }
        if let Some(name) = &self.name {
            if has_line_break(name) {
                return Err(InvalidEvent("an event name cannot contain a line break"));
            }
            field(&mut out, "event", name);
        }
        if let Some(id) = &self.id {
            if has_line_break(id) || id.contains('\0') {
                return Err(InvalidEvent("an event id cannot contain a line break or NUL"));
            }
            field(&mut out, "id", id);
        }
        if let Some(retry) = self.retry {
            field(&mut out, "retry", &retry.as_millis().to_string());
        }
        if let Some(data) = &self.data {
            for line in lines(data) {
                field(&mut out, "data", line);
            }
        }
        out.push('\n');
        Ok(Bytes::from(out))
    }
}

fn field(out: &mut String, name: &str, value: &str) {
    out.push_str(name);
    out.push(':');
    // A value starting with a space would lose it: the parser drops one space after the colon.
    out.push(' ');
    out.push_str(value);
    out.push('\n');
}

fn has_line_break(text: &str) -> bool {
    text.contains(['\r', '\n'])
}

/// Lines as an event-stream parser splits them: at CRLF, LF or CR.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        match text.find(['\r', '\n']) {
            None => {
                rest = None;
                Some(text)
            }
            Some(at) => {
                let skip = if text[at..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&text[at + skip..]);
                Some(&text[..at])
            }
        }
    })
}
