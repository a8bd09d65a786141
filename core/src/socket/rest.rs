//! A quiet WebSocket *rests*: its session hands tungstenite's state back and waits for the
//! client with no buffer at all, as a quiet keep-alive connection does (`server::io`).
//!
//! Why: tungstenite allocates its read buffer (16 KiB here, see `session`) up front and zeroes
//! it before its first read, and keeps its write buffer at the largest message it has sent;
//! neither shrinks. Measured by the `ws-idle-10k` probe (10,000 echo sockets, quiet for 2 s),
//! RSS per socket: Rust 25.8 → 10.8 KiB with rests, Python 28.5 → 13.3, Node 30.7 → 15.5,
//! Ruby 32.5 → 17.3 (and 5.8, 8.3, 10.4, 12.2 once the connection's task was made small, see
//! `server::connection`; 4.0, 6.5, 9.1, 10.9 once the session's was, see `session::run`).
//! What is left is the session (744 bytes of it its task), the handler's task and its objects
//! in the interpreter, and the connection's own share.
//!
//! Cost: a busy socket sets a flag per message and wakes once a second for the rest timer;
//! the next message after a rest builds tungstenite again (its read buffer is allocated and
//! zeroed again).
//!
//! A rest may only drop tungstenite when it holds nothing of the client's: no frame read in
//! part, no fragment of a message whose last fragment has not come, no bytes it read and has
//! not parsed. tungstenite does not say so, so [`Watched`] follows the frame boundaries of the
//! bytes it hands over, by their headers alone (payloads are skipped, not looked at), and
//! notes when tungstenite last found the socket empty: it reads only once it has parsed every
//! whole frame it holds, so an empty socket at a boundary between messages means an empty
//! buffer. Pings answered and messages sent are flushed before it rests (`session`).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The session's socket, with what a rest needs to know of the bytes read from it.
pub(super) struct Watched<S> {
    io: S,
    frames: Frames,
    /// The last read found nothing waiting.
    found_empty: bool,
    /// Set while a write waits for the client to read (the last one found the socket full),
    /// shared with the session, which reads no more until it is cleared (`session::run`).
    write_blocked: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl<S> Watched<S> {
    pub(super) fn new(io: S, write_blocked: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Self {
        Watched { io, frames: Frames::default(), found_empty: false, write_blocked }
    }

    fn wrote<T>(&self, write: &Poll<T>) {
        self.write_blocked.store(write.is_pending(), std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether every byte read so far belongs to a whole message, and the reader has since
    /// found the socket empty: whoever parsed them holds nothing unparsed.
    pub(super) fn holds_nothing_unread(&self) -> bool {
        self.found_empty && self.frames.between_messages()
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.io).poll_read(cx, buf);
        self.found_empty = read.is_pending();
        if let Poll::Ready(Ok(())) = read {
            let this = &mut *self;
            this.frames.advance(&buf.filled()[before..]);
        }
        read
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let write = Pin::new(&mut self.io).poll_write(cx, data);
        self.wrote(&write);
        write
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        let write = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.wrote(&write);
        write
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// Where a client's byte stream stands among its frames (RFC 6455 §5.2), from the headers.
/// It does not judge them: a malformed frame is tungstenite's to refuse, and the connection
/// then closes without a rest.
#[derive(Default, Debug)]
struct Frames {
    /// The current frame's header, as far as it has come (at most 14 bytes).
    header: [u8; 14],
    header_len: usize,
    /// Payload bytes of the current frame still to come.
    payload_left: u64,
    /// A data frame without FIN was the last: its message's final fragment is still to come
    /// (control frames may come between fragments, and leave this as it is).
    mid_message: bool,
}

impl Frames {
    fn between_messages(&self) -> bool {
        self.header_len == 0 && self.payload_left == 0 && !self.mid_message
    }

    fn advance(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.payload_left > 0 {
                let skipped = self.payload_left.min(bytes.len() as u64);
                self.payload_left -= skipped;
                bytes = &bytes[skipped as usize..];
                continue;
            }
            self.header[self.header_len] = bytes[0];
            self.header_len += 1;
            bytes = &bytes[1..];
            if let Some(payload) = self.whole_header() {
                let data_frame = self.header[0] & 0x08 == 0;
                if data_frame {
                    self.mid_message = self.header[0] & 0x80 == 0;
                }
                self.payload_left = payload;
                self.header_len = 0;
            }
        }
    }

    /// The payload length, once the header is whole.
    fn whole_header(&self) -> Option<u64> {
        let header = &self.header[..self.header_len];
        let [_, second, rest @ ..] = header else { return None };
        let mask = if second & 0x80 != 0 { 4 } else { 0 };
        let (extended, length) = match second & 0x7f {
            126 => (2, rest.get(..2).map(|b| u64::from(u16::from_be_bytes([b[0], b[1]])))),
            127 => (8, rest.get(..8).map(|b| u64::from_be_bytes(b.try_into().expect("eight bytes")))),
            short => (0, Some(u64::from(short))),
        };
        (rest.len() == extended + mask).then_some(length).flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::Frames;

    /// A client frame: FIN and opcode, masked (key 1, 2, 3, 4) as a client's must be.
    fn frame(fin: bool, opcode: u8, payload_len: usize) -> Vec<u8> {
        let mut out = vec![if fin { 0x80 } else { 0 } | opcode];
        match payload_len {
            n if n < 126 => out.push(0x80 | n as u8),
            n if n <= 0xffff => {
                out.push(0x80 | 126);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                out.push(0x80 | 127);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        out.extend_from_slice(&[1, 2, 3, 4]);
        out.extend(std::iter::repeat_n(0x5a, payload_len));
        out
    }

    /// Feeds `bytes` in pieces of `piece` bytes; the verdict after each piece.
    fn verdicts(bytes: &[u8], piece: usize) -> Vec<bool> {
        let mut frames = Frames::default();
        bytes
            .chunks(piece)
            .map(|chunk| {
                frames.advance(chunk);
                frames.between_messages()
            })
            .collect()
    }

    #[test]
    fn a_boundary_is_seen_only_after_a_whole_frame_of_any_length_in_any_pieces() {
        for payload_len in [0, 1, 125, 126, 127, 65_535, 65_536, 70_000] {
            let bytes = frame(true, 0x2, payload_len);
            for piece in [1, 2, 3, 7, 14, 1000, bytes.len()] {
                let seen = verdicts(&bytes, piece);
                assert_eq!(seen.last(), Some(&true), "length {payload_len}, pieces of {piece}");
                assert!(seen[..seen.len() - 1].iter().all(|between| !between), "length {payload_len}, pieces of {piece}: a boundary inside the frame");
            }
        }
    }

    #[test]
    fn a_fragmented_message_is_between_messages_only_after_its_final_fragment() {
        let mut frames = Frames::default();
        frames.advance(&frame(false, 0x1, 10));
        assert!(!frames.between_messages(), "first fragment");
        // A ping between the fragments leaves the message open.
        frames.advance(&frame(true, 0x9, 4));
        assert!(!frames.between_messages(), "ping between fragments");
        frames.advance(&frame(false, 0x0, 10));
        assert!(!frames.between_messages(), "middle fragment");
        frames.advance(&frame(true, 0x0, 10));
        assert!(frames.between_messages(), "final fragment");
        // Control frames alone, and unmasked headers, are whole frames too.
        frames.advance(&frame(true, 0xA, 0));
        frames.advance(&[0x89, 0x02, b'h', b'i']);
        assert!(frames.between_messages());
    }

    #[test]
    fn several_frames_in_one_read_end_where_the_last_one_does() {
        let mut bytes = frame(true, 0x1, 5);
        bytes.extend(frame(true, 0x2, 300));
        let whole = bytes.len();
        bytes.extend(&frame(true, 0x1, 5)[..3]);
        let mut frames = Frames::default();
        frames.advance(&bytes[..whole]);
        assert!(frames.between_messages());
        frames.advance(&bytes[whole..]);
        assert!(!frames.between_messages(), "a header in part");
    }
}
