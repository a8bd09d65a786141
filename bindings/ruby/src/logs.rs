//! The core's log records as Ruby values, for the app's `Logger` (`Ferrule::App.new(logger:)`).
//!
//! Runtime threads never wait for the GVL to log: the core queues each record and rings an
//! eventfd; a Ruby thread of the app waits on it with Ruby's own IO wait (no GVL held), then
//! takes the batch here and hands each record to `logger.add`.

use ferrule_core::log::{FieldValue, LogRecord};
use magnus::{prelude::*, Error, RArray, Ruby};

/// `[[level, target, message, fields], ...]`: level as Logger's lower-cased severity name
/// (`"debug"`, `"info"`, `"warn"`, `"error"`), fields a Hash with Symbol keys.
pub fn to_ruby(ruby: &Ruby, records: Vec<LogRecord>) -> Result<RArray, Error> {
    let out = ruby.ary_new_capa(records.len());
    for record in records {
        let fields = ruby.hash_new();
        for (name, value) in &record.fields {
            let key = ruby.to_symbol(name);
            match value {
                FieldValue::Int(v) => fields.aset(key, *v)?,
                FieldValue::Uint(v) => fields.aset(key, *v)?,
                FieldValue::Float(v) => fields.aset(key, *v)?,
                FieldValue::Bool(v) => fields.aset(key, *v)?,
                FieldValue::Text(v) => fields.aset(key, v.as_str())?,
            }
        }
        out.push(ruby.ary_new_from_values(&[
            ruby.str_new(record.level.name()).as_value(),
            ruby.str_new(record.target).as_value(),
            ruby.str_new(&record.message).as_value(),
            fields.as_value(),
        ]))?;
    }
    Ok(out)
}
