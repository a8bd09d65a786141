//! A WebSocket's handshake from its hooks to its socket. The hooks run on the handshake as a
//! [`Job::Call`] (with [`Call::handshake`]); what they set on their request (Node's `ctx.user`,
//! Python's `request.state`, Ruby's `request.env`) the binding keeps under [`Handshake::id`],
//! and takes back when the socket opens ([`super::Open::handshake`]) — or forgets on
//! [`Job::Unopened`], sent when the handshake will never be a socket.
//!
//! Exactly one of the two follows each handshake, and only once the binding has let go of its
//! call: the [`Handshake`] is shared by the call and the upgrade, and whichever drops it last
//! without a socket opened posts [`Job::Unopened`]. A binding that keeps its call's
//! `handshake` until it has answered therefore never meets `Unopened` before it has kept
//! anything, whatever the order: a handshake refused, one past its time limit (its 101 then
//! arrives after the core gave up), a client gone before the upgrade, a server stopping.

use super::Job;
use crate::bridge::Mailbox;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

pub struct Handshake<R> {
    id: u64,
    mailbox: Weak<Mailbox<Job<R>>>,
    opened: AtomicBool,
}

/// Ids are never reused, so a binding's kept values cannot be mistaken for another's.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl<R> Handshake<R> {
    pub(crate) fn new(mailbox: &Arc<Mailbox<Job<R>>>) -> Arc<Self> {
        Arc::new(Handshake { id: NEXT_ID.fetch_add(1, Ordering::Relaxed), mailbox: Arc::downgrade(mailbox), opened: AtomicBool::new(false) })
    }

    /// What the binding keeps the hooks' values under, until [`super::Open::handshake`] or
    /// [`Job::Unopened`] names it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Its socket is open: the [`super::Open`] that says so carries the id, and no
    /// [`Job::Unopened`] follows.
    pub(crate) fn open(&self) -> u64 {
        self.opened.store(true, Ordering::Relaxed);
        self.id
    }
}

impl<R> Drop for Handshake<R> {
    fn drop(&mut self) {
        if *self.opened.get_mut() {
            return;
        }
        // A closed mailbox (the server has stopped) takes no job: what a binding kept for a
        // handshake the stop cut short stays kept (Python's goes with its server's dispatcher).
        if let Some(mailbox) = self.mailbox.upgrade() {
            let _ = mailbox.post(Job::Unopened(self.id));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unopened(mailbox: &Mailbox<Job<()>>) -> Vec<u64> {
        let mut jobs = Vec::new();
        mailbox.take_all(&mut jobs);
        jobs.into_iter().map(|job| if let Job::Unopened(id) = job { id } else { panic!("only Unopened is posted") }).collect()
    }

    #[test]
    fn the_last_holder_to_let_go_without_a_socket_says_so_once() {
        let mailbox: Arc<Mailbox<Job<()>>> = Arc::new(Mailbox::new());
        let handshake = Handshake::new(&mailbox);
        let (call, upgrade) = (handshake.clone(), handshake);
        let id = call.id();
        drop(upgrade);
        assert!(unopened(&mailbox).is_empty(), "the binding still holds its call");
        drop(call);
        assert_eq!(unopened(&mailbox), [id]);
    }

    #[test]
    fn an_opened_handshake_says_nothing_and_ids_differ() {
        let mailbox: Arc<Mailbox<Job<()>>> = Arc::new(Mailbox::new());
        let (first, second) = (Handshake::new(&mailbox), Handshake::new(&mailbox));
        assert_ne!(first.id(), second.id());
        let id = first.open();
        assert_eq!(id, first.id());
        drop(first);
        assert!(unopened(&mailbox).is_empty());
        let second_id = second.id();
        mailbox.close();
        drop(second);
        assert!(unopened(&mailbox).is_empty(), "a closed mailbox takes nothing (id {second_id})");
    }
}
