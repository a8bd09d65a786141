//! A log record as it leaves the core: level, target, message and the event's fields.

use serde::{Deserialize, Serialize};
use std::io::Write;

/// The `log_level` setting: records below it are never formatted. `Off` writes none.
/// Ordered from the most to the least verbose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Debug,
    #[default]
    Info,
    Warn,
    Error,
    Off,
}

impl LogLevel {
    /// The level's name as every binding's logger knows it (pino's, Python's lower-cased,
    /// Ruby Logger's lower-cased): `debug`, `info`, `warn`, `error`.
    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
            LogLevel::Off => "off",
        }
    }

    pub(crate) fn of(level: &tracing::Level) -> LogLevel {
        match *level {
            tracing::Level::ERROR => LogLevel::Error,
            tracing::Level::WARN => LogLevel::Warn,
            tracing::Level::INFO => LogLevel::Info,
            _ => LogLevel::Debug,
        }
    }
}

/// A field's value, typed so a structured logger keeps numbers as numbers.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue {
    Int(i64),
    Uint(u64),
    Float(f64),
    Bool(bool),
    Text(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord {
    pub level: LogLevel,
    /// `ferrule::access`, `ferrule::server`, `ferrule::handler`.
    pub target: &'static str,
    pub message: String,
    pub fields: Vec<(&'static str, FieldValue)>,
}

impl LogRecord {
    /// The warning a drain starts with when a slow logger lost records.
    pub(crate) fn dropped(count: usize) -> LogRecord {
        LogRecord {
            level: LogLevel::Warn,
            target: "ferrule::server",
            message: format!("{count} log record(s) were dropped: the logger fell more than {} behind", super::QUEUE_LIMIT),
            fields: vec![("dropped", FieldValue::Uint(count as u64))],
        }
    }

    /// The target as a dotted logger name (`ferrule.access`), as Python's `logging` names them.
    pub fn logger_name(&self) -> String {
        self.target.replace("::", ".")
    }

    /// `ferrule: <message>`, the line every binding wrote before loggers existed.
    pub(crate) fn write_line(&self, out: &mut impl Write) {
        let _ = writeln!(out, "ferrule: {}", self.message);
    }
}
