//! A stream whose producer lives in the binding's interpreter (a Python generator, a Node
//! Readable, a Ruby `each` body), pulled batch by batch.
//!
//! The interpreter is asked for more only when the client has taken what came before: one
//! [`Job::Pull`] in flight per stream, read ahead by one batch so the interpreter produces the
//! next while the connection writes the last. A stream therefore holds at most one batch
//! beyond what the socket holds, however slowly its client reads, and it crosses into the
//! interpreter once per batch — in the same mailbox, and the same wake-up, as the requests.

use super::Job;
use crate::bridge::Mailbox;
use crate::handler::HandlerError;
use crate::stream::{BoxError, StreamFailed};
use bytes::Bytes;
use futures_util::Stream;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::oneshot;

/// The binding's own name for one of its producers.
pub type StreamId = u64;

/// What the interpreter produced for one pull: chunks in order, and whether the producer is
/// exhausted (then the binding has already let go of it).
#[derive(Debug, Default)]
pub struct Pulled {
    pub chunks: Vec<Bytes>,
    pub end: bool,
}

/// A failure is logged with the route and ends the stream (see [`crate::stream`]); the binding
/// has let go of the producer.
pub type PullOutcome = Result<Pulled, HandlerError>;
pub type PullReply = oneshot::Sender<PullOutcome>;

/// A request for the next batch of stream `stream`.
pub struct Pull {
    pub stream: StreamId,
    pub reply: PullReply,
}

impl Pull {
    /// Whether nobody waits for this batch any more (the stream's response was dropped): the
    /// [`Job::Release`] that follows closes the producer.
    pub fn is_abandoned(&self) -> bool {
        self.reply.is_closed()
    }
}

pub(super) struct Pulling<R> {
    id: StreamId,
    mailbox: Arc<Mailbox<Job<R>>>,
    side: &'static str,
    ready: VecDeque<Bytes>,
    waiting: Option<oneshot::Receiver<PullOutcome>>,
    /// The producer is done with (ended, failed, or its interpreter gone): nothing to release.
    finished: bool,
}

impl<R> Pulling<R> {
    pub(super) fn new(id: StreamId, mailbox: Arc<Mailbox<Job<R>>>, side: &'static str) -> Self {
        Pulling { id, mailbox, side, ready: VecDeque::new(), waiting: None, finished: false }
    }

    /// Posts a pull unless one is in flight or the producer is done; false if the mailbox
    /// is closed (the interpreter stopped).
    fn ask(&mut self) -> bool {
        if self.finished || self.waiting.is_some() {
            return true;
        }
        let (reply, answer) = oneshot::channel();
        if self.mailbox.post(Job::Pull(Pull { stream: self.id, reply })).is_err() {
            return false;
        }
        self.waiting = Some(answer);
        true
    }

    fn fail(&mut self, message: String) -> Poll<Option<Result<Bytes, BoxError>>> {
        self.finished = true;
        self.ready.clear();
        Poll::Ready(Some(Err(Box::new(StreamFailed(message)))))
    }
}

impl<R> Unpin for Pulling<R> {}

impl<R> Stream for Pulling<R> {
    type Item = Result<Bytes, BoxError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(chunk) = this.ready.pop_front() {
                if this.ready.is_empty() {
                    // Read ahead: the next batch is made while this one is written. A closed
                    // mailbox shows at the next poll.
                    this.ask();
                }
                return Poll::Ready(Some(Ok(chunk)));
            }
            if this.finished && this.waiting.is_none() {
                return Poll::Ready(None);
            }
            if !this.ask() {
                return this.fail(format!("{} stopped before the stream ended", this.side));
            }
            let waiting = this.waiting.as_mut().expect("asked");
            let outcome = std::task::ready!(Pin::new(waiting).poll(cx));
            this.waiting = None;
            match outcome {
                Ok(Ok(pulled)) => {
                    this.ready.extend(pulled.chunks.into_iter().filter(|c| !c.is_empty()));
                    this.finished = pulled.end;
                }
                Ok(Err(error)) => return this.fail(error.message().to_owned()),
                Err(_) => return this.fail(format!("{} dropped the stream", this.side)),
            }
        }
    }
}

impl<R> Drop for Pulling<R> {
    fn drop(&mut self) {
        if !self.finished {
            // The client left (or the response was never sent): the producer is closed. A
            // stopped interpreter has dropped it already.
            let _ = self.mailbox.post(Job::Release(self.id));
        }
    }
}
