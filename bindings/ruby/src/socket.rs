//! `Ferrule::NativeSocket`: a WebSocket as `Ferrule::WebSocket` (lib/ferrule/websocket.rb)
//! holds it. Taking what arrived and queuing sends never wait on the network, so the GVL is
//! held only while Ruby runs; a thread waits for messages in the mailbox, without the GVL,
//! like every request.

use ferrule_core::bytes::Bytes;
use ferrule_core::log::Logs;
use ferrule_core::socket::{Closed, Message, Socket};
use magnus::{Error, RArray, RString, Ruby};

#[magnus::wrap(class = "Ferrule::NativeSocket", free_immediately, size)]
pub struct NativeSocket {
    socket: Socket,
    label: String,
    logs: Logs,
}

impl NativeSocket {
    pub fn new(socket: Socket, label: String, logs: Logs) -> Self {
        NativeSocket { socket, label, logs }
    }

    pub fn id(&self) -> u64 {
        self.socket.id()
    }

    pub fn subprotocol(&self) -> Option<String> {
        self.socket.subprotocol().map(str::to_owned)
    }

    pub fn buffered(&self) -> usize {
        self.socket.buffered()
    }

    /// `[code, reason, *messages]`: everything that arrived (text as UTF-8 Strings, binary as
    /// binary Strings) and, once the connection is over, its close code and reason (else nil,
    /// nil). Taking nothing arms the next wake-up.
    pub fn take(ruby: &Ruby, rb_self: &Self) -> Result<RArray, Error> {
        let taken = rb_self.socket.take();
        let out = ruby.ary_new_capa(taken.messages.len() + 2);
        match taken.end {
            Some(closed) => {
                out.push(closed.code)?;
                out.push(ruby.str_new(&closed.reason))?;
            }
            None => {
                out.push(ruby.qnil())?;
                out.push(ruby.qnil())?;
            }
        }
        for message in taken.messages {
            match message {
                Message::Text(text) => out.push(ruby.str_new(&text))?,
                Message::Binary(data) => out.push(ruby.str_from_slice(&data))?,
            }
        }
        Ok(out)
    }

    /// Queues a text message; false when the socket is closed.
    pub fn send_text(ruby: &Ruby, rb_self: &Self, text: RString) -> Result<bool, Error> {
        let text = text.to_string().map_err(|_| Error::new(ruby.exception_arg_error(), "ferrule: a text message must be valid UTF-8"))?;
        Ok(rb_self.socket.send(Message::Text(text.into())).is_ok())
    }

    /// Queues a binary message; false when the socket is closed.
    pub fn send_binary(&self, data: RString) -> bool {
        // SAFETY: the bytes are copied before any other Ruby code can run.
        let bytes = Bytes::copy_from_slice(unsafe { data.as_slice() });
        self.socket.send(Message::Binary(bytes)).is_ok()
    }

    pub fn ping(&self, data: RString) -> bool {
        // SAFETY: as in `send_binary`.
        let bytes = Bytes::copy_from_slice(unsafe { data.as_slice() });
        self.socket.ping(bytes).is_ok()
    }

    /// Raises ArgumentError for a close no server may send (the core's rule).
    pub fn close(ruby: &Ruby, rb_self: &Self, code: i64, reason: String) -> Result<(), Error> {
        rb_self.socket.close(code, &reason).map_err(|refused| Error::new(ruby.exception_arg_error(), format!("ferrule: {refused}")))
    }

    /// The handler raised: `message` (the exception and its backtrace) is logged with the
    /// route, and the socket closed with 1011.
    pub fn fail(&self, message: String) {
        self.logs.handler_failed(&self.label, &format!("{}: {message}", self.label));
        self.socket.close_with(Closed::new(1011, ""));
    }
}
