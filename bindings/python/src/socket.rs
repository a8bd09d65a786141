//! A WebSocket as `ferrule.websocket.WebSocket` holds it: taking what arrived (everything, in
//! one call) and queuing sends. Neither waits on the network, so neither holds the GIL while
//! a client is slow; waiting for messages is an asyncio future the dispatch resolves
//! (`ferrule.websocket.arrived`), woken once per batch.

use ferrule_core::bytes::Bytes;
use ferrule_core::socket::{Message, Socket};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct NativeSocket {
    socket: Socket,
    label: String,
}

impl NativeSocket {
    pub fn new(socket: Socket, label: String) -> Self {
        NativeSocket { socket, label }
    }
}

/// The close of the socket, `(code, reason)`, as the error a send raises: the core's own 1008
/// for a client that does not read, before the connection has ended, too (it said 1000 then,
/// with no reason: found by a probe).
fn closed_error(socket: &Socket) -> PyErr {
    let (code, reason) = socket.closing().map_or((1000, String::new()), |c| (c.code, c.reason));
    pyo3::exceptions::PyConnectionError::new_err((code, reason))
}

#[pymethods]
impl NativeSocket {
    #[getter]
    fn id(&self) -> u64 {
        self.socket.id()
    }

    #[getter]
    fn subprotocol(&self) -> Option<&str> {
        self.socket.subprotocol()
    }

    /// `METHOD /path` of the route, for log lines.
    #[getter]
    fn label(&self) -> &str {
        &self.label
    }

    /// Bytes queued for the client and not yet written.
    #[getter]
    fn buffered(&self) -> usize {
        self.socket.buffered()
    }

    /// `(messages, end)`: every message that arrived (str for text, bytes for binary) and,
    /// once the connection is over, `(code, reason)`. Taking nothing arms the next wake-up.
    fn take<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyList>, Option<(u16, String)>)> {
        let taken = self.socket.take();
        let messages = PyList::empty(py);
        for message in taken.messages {
            match message {
                Message::Text(text) => messages.append(PyString::new(py, &text))?,
                Message::Binary(data) => messages.append(PyBytes::new(py, &data))?,
            }
        }
        Ok((messages, taken.end.map(|c| (c.code, c.reason))))
    }

    fn send_text(&self, text: &str) -> PyResult<()> {
        self.socket.send(Message::Text(text.into())).map_err(|_| closed_error(&self.socket))
    }

    fn send_bytes(&self, data: &[u8]) -> PyResult<()> {
        self.socket.send(Message::Binary(Bytes::copy_from_slice(data))).map_err(|_| closed_error(&self.socket))
    }

    #[pyo3(signature = (data = b"".as_slice()))]
    fn ping(&self, data: &[u8]) -> PyResult<()> {
        if data.len() > 125 {
            return Err(PyValueError::new_err("a ping carries at most 125 bytes"));
        }
        self.socket.ping(Bytes::copy_from_slice(data)).map_err(|_| closed_error(&self.socket))
    }

    /// Raises `ValueError` for a close no server may send (the core's rule).
    #[pyo3(signature = (code = 1000, reason = ""))]
    fn close(&self, code: i64, reason: &str) -> PyResult<()> {
        self.socket.close(code, reason).map_err(|refused| PyValueError::new_err(refused.to_string()))
    }
}
