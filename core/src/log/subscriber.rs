//! The `tracing` subscriber behind each app's [`super::Logs`]: it keeps the core's own events
//! (targets under `ferrule`) at or above the app's level and turns each into a [`LogRecord`].
//! Spans are not used by the core, so they are accepted and ignored.

use super::record::{FieldValue, LogLevel, LogRecord};
use super::{Logs, Sink};
use std::fmt::Write;
use std::sync::Arc;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};

pub(super) struct AppSubscriber(pub(super) Arc<Sink>);

fn is_ours(metadata: &Metadata<'_>) -> bool {
    metadata.target() == "ferrule" || metadata.target().starts_with("ferrule::")
}

impl Subscriber for AppSubscriber {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        // hyper and h2 emit trace events of their own on these threads: never ours, so their
        // callsites are switched off once. Ours depend on each app's level: asked every time.
        if is_ours(metadata) { Interest::sometimes() } else { Interest::never() }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        is_ours(metadata) && self.0.level != LogLevel::Off && LogLevel::of(metadata.level()) >= self.0.level
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        // A line on stderr is only the message: the fields are kept for a logger's queue alone.
        let mut fields = Fields { message: String::new(), fields: Vec::new(), keep: self.0.is_queued() };
        event.record(&mut fields);
        let record = LogRecord {
            level: LogLevel::of(metadata.level()),
            target: metadata.target(),
            message: fields.message,
            fields: fields.fields,
        };
        Logs::write(&self.0, record);
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

struct Fields {
    message: String,
    fields: Vec<(&'static str, FieldValue)>,
    keep: bool,
}

impl Fields {
    fn push(&mut self, field: &Field, value: impl FnOnce() -> FieldValue) {
        if self.keep {
            self.fields.push((field.name(), value()));
        }
    }
}

impl Visit for Fields {
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.push(field, || FieldValue::Int(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.push(field, || FieldValue::Uint(value));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.push(field, || FieldValue::Float(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.push(field, || FieldValue::Bool(value));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.push(field, || FieldValue::Text(value.to_owned()));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            self.push(field, || FieldValue::Text(format!("{value:?}")));
        }
    }
}
