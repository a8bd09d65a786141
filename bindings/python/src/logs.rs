//! The core's log records in Python's `logging`.
//!
//! The runtime's threads never take the GIL to log: the core queues each record and rings an
//! eventfd ([`LogDrain::doorbell`]) that the event loop watches, as it watches the request
//! doorbell. The loop's thread then hands the batch to `ferrule._logging.emit`, which gives each
//! record to the logger of its target (`ferrule.access`, `ferrule.server`, `ferrule.handler`),
//! with the record's values as attributes (`record.status`, `record.request_id`).

use ferrule_core::log::{FieldValue, LogRecord, Logs};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct LogDrain {
    logs: Logs,
}

impl LogDrain {
    pub fn new(logs: Logs) -> Self {
        LogDrain { logs }
    }
}

static EMIT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

#[pymethods]
impl LogDrain {
    /// Readable while records wait (`loop.add_reader(drain.doorbell, drain.drain)`).
    #[getter]
    fn doorbell(&self) -> i32 {
        self.logs.doorbell_fd().unwrap_or(-1)
    }

    /// Gives every waiting record to its Python logger.
    fn drain(&self, py: Python<'_>) -> PyResult<()> {
        let mut records = Vec::new();
        self.logs.take(&mut records);
        if records.is_empty() {
            return Ok(());
        }
        let emit = EMIT.import(py, "ferrule._logging", "emit")?;
        for record in records {
            let LogRecord { level, message, fields, .. } = &record;
            let extra = PyDict::new(py);
            for (name, value) in fields {
                match value {
                    FieldValue::Int(v) => extra.set_item(name, v)?,
                    FieldValue::Uint(v) => extra.set_item(name, v)?,
                    FieldValue::Float(v) => extra.set_item(name, v)?,
                    FieldValue::Bool(v) => extra.set_item(name, v)?,
                    FieldValue::Text(v) => extra.set_item(name, v)?,
                }
            }
            emit.call1((record.logger_name(), level.name(), message, extra))?;
        }
        Ok(())
    }
}
