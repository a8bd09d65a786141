//! Where a producer that pushes (a Ruby `each` body, an async generator run as a task, a Node
//! async iterator) meets the core's pulls: one per stream, held by the binding.
//!
//! What the producer pushes while no pull waits is kept in a bounded batch
//! ([`crate::stream::batch`]) that the next pull takes whole, in one crossing; a pull that
//! finds nothing waits for the next push, which answers it at once. So nothing ready is held
//! back, and a producer runs at most one batch ahead of its client: when the batch is full
//! ([`PushBuffer::has_room`]), the binding makes it wait until a pull has taken the batch.

use super::pulled::{PullOutcome, PullReply, Pulled};
use crate::handler::HandlerError;
use crate::stream::Batch;
use bytes::Bytes;

/// An answer to send now: through `Inbox::answer_pull`.
pub type Answer = (PullReply, PullOutcome);

#[derive(Debug, Default)]
pub struct PushBuffer {
    batch: Batch,
    /// A pull that found nothing, waiting for the next push.
    wanted: Option<PullReply>,
    /// How the producer ended, sent once the batch has gone.
    ended: Option<Result<(), HandlerError>>,
}

impl PushBuffer {
    /// A pull: answered now with what was pushed (or the end), or kept for the next push.
    pub fn pull(&mut self, reply: PullReply) -> Option<Answer> {
        match self.take() {
            Some(outcome) => Some((reply, outcome)),
            None => {
                self.wanted = Some(reply);
                None
            }
        }
    }

    /// An item: handed to the waiting pull (with the rest of the batch), or kept.
    pub fn push(&mut self, chunk: Bytes) -> Option<Answer> {
        self.batch.push(chunk);
        self.answer_waiting()
    }

    /// The producer is done (`Ok`) or failed (`Err`): sent once the batch has gone.
    pub fn end(&mut self, how: Result<(), HandlerError>) -> Option<Answer> {
        self.ended = Some(how);
        self.answer_waiting()
    }

    /// Whether the producer may push again without waiting.
    pub fn has_room(&self) -> bool {
        self.batch.has_room()
    }

    /// Whether `outcome` is the stream's last answer (the binding then forgets the stream).
    pub fn is_last(outcome: &PullOutcome) -> bool {
        !matches!(outcome, Ok(Pulled { end: false, .. }))
    }

    fn answer_waiting(&mut self) -> Option<Answer> {
        let reply = self.wanted.take()?;
        match self.take() {
            Some(outcome) => Some((reply, outcome)),
            None => {
                self.wanted = Some(reply);
                None
            }
        }
    }

    /// The batch (ending the stream if the producer has ended), or the end alone.
    fn take(&mut self) -> Option<PullOutcome> {
        if !self.batch.is_empty() {
            let end = matches!(self.ended, Some(Ok(())));
            return Some(Ok(Pulled { chunks: std::mem::take(&mut self.batch).into_chunks(), end }));
        }
        match self.ended.take()? {
            Ok(()) => Some(Ok(Pulled { chunks: Vec::new(), end: true })),
            Err(failure) => Some(Err(failure)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply() -> (PullReply, tokio::sync::oneshot::Receiver<PullOutcome>) {
        tokio::sync::oneshot::channel()
    }

    fn chunks(answer: Option<Answer>) -> (Vec<Bytes>, bool) {
        let (_, outcome) = answer.expect("answered");
        let pulled = outcome.expect("not a failure");
        (pulled.chunks, pulled.end)
    }

    #[test]
    fn a_pull_takes_everything_pushed_and_an_empty_one_waits_for_the_next_push() {
        let mut buffer = PushBuffer::default();
        assert!(buffer.push(Bytes::from_static(b"a")).is_none());
        assert!(buffer.push(Bytes::from_static(b"b")).is_none());
        assert_eq!(chunks(buffer.pull(reply().0)), (vec![Bytes::from_static(b"a"), Bytes::from_static(b"b")], false));
        assert!(buffer.pull(reply().0).is_none(), "nothing there: the pull waits");
        assert_eq!(chunks(buffer.push(Bytes::from_static(b"c"))), (vec![Bytes::from_static(b"c")], false), "the next push answers it at once");
    }

    #[test]
    fn the_end_and_a_failure_come_after_what_was_pushed_before() {
        let mut ended = PushBuffer::default();
        ended.push(Bytes::from_static(b"last"));
        assert!(ended.end(Ok(())).is_none());
        let (answer, end) = chunks(ended.pull(reply().0));
        assert_eq!((answer.len(), end), (1, true), "the batch and the end in one answer");

        let mut failed = PushBuffer::default();
        failed.push(Bytes::from_static(b"partial"));
        assert!(failed.end(Err(HandlerError::new("broke"))).is_none());
        assert_eq!(chunks(failed.pull(reply().0)), (vec![Bytes::from_static(b"partial")], false));
        let (_, outcome) = failed.pull(reply().0).expect("answered");
        assert!(PushBuffer::is_last(&outcome) && outcome.is_err(), "then the failure");
    }

    #[test]
    fn a_full_batch_has_no_room_until_a_pull_takes_it() {
        let mut buffer = PushBuffer::default();
        for _ in 0..crate::stream::batch::MAX_ITEMS {
            buffer.push(Bytes::from_static(b"x"));
        }
        assert!(!buffer.has_room());
        buffer.pull(reply().0);
        assert!(buffer.has_room());
    }
}
