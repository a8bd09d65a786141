//! Where a binding's interpreter meets its requests: the mailbox their calls wait in, and the
//! batch the answers go back in. A served app ([`super::Serving`]) and an in-process one
//! ([`super::InProcess`]) each have one, and both hand it out (through `Deref`) so a binding
//! takes calls and answers them the same way whichever it runs.

use super::{Call, HostRoute};
use crate::bridge::{hand_over, Mailbox, Outcome, Reply, ReplyBatch};
use crate::handler::{Handler, HandlerFuture};
use crate::request::RequestData;
use std::sync::Arc;

pub struct Inbox<R> {
    mailbox: Arc<Mailbox<Call<R>>>,
    replies: Arc<ReplyBatch<Outcome>>,
}

impl<R: Send + Sync + 'static> Inbox<R> {
    pub(super) fn new(mailbox: Mailbox<Call<R>>, queue_limit: usize) -> Self {
        mailbox.set_queue_limit(queue_limit);
        Inbox { mailbox: Arc::new(mailbox), replies: Arc::new(ReplyBatch::default()) }
    }

    /// The core's handler for `route`: posts each request here and awaits its answer. `side`
    /// names the interpreter in the log line of a request it never answered.
    pub(super) fn handler(&self, route: &Arc<HostRoute<R>>, side: &'static str) -> Arc<dyn Handler> {
        Arc::new(HostHandler { route: route.clone(), mailbox: self.mailbox.clone(), side })
    }

    pub(super) fn mailbox_arc(&self) -> Arc<Mailbox<Call<R>>> {
        self.mailbox.clone()
    }

    pub(super) fn replies(&self) -> &Arc<ReplyBatch<Outcome>> {
        &self.replies
    }
}

impl<R> Inbox<R> {
    /// Where the calls wait: `take_all` (doorbell, callback), `wait_for` (blocking).
    pub fn mailbox(&self) -> &Mailbox<Call<R>> {
        &self.mailbox
    }

    /// Queues the answer to one request; [`Inbox::flush`] sends every queued answer.
    pub fn answer(&self, reply: Reply, outcome: Outcome) {
        self.replies.push(reply, outcome);
    }

    pub fn flush(&self) {
        self.replies.flush();
    }
}

struct HostHandler<R> {
    route: Arc<HostRoute<R>>,
    mailbox: Arc<Mailbox<Call<R>>>,
    side: &'static str,
}

impl<R: Send + Sync + 'static> Handler for HostHandler<R> {
    fn call(&self, request: RequestData) -> HandlerFuture {
        let route = self.route.clone();
        hand_over(&self.mailbox, self.side, |reply| Call { route, request, reply })
    }
}
