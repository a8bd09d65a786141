//! Where a binding's interpreter meets its requests: the mailbox their calls wait in, and the
//! batches the answers go back in. A served app ([`super::Serving`]) and an in-process one
//! ([`super::InProcess`]) each have one, and both hand it out (through `Deref`) so a binding
//! takes calls and answers them the same way whichever it runs.

use super::hooks::{GroupId, Groups, Hooks};
use super::pulled::{PullOutcome, PullReply, Pulling, StreamId};
use super::{Call, Handshake, HostRoute, Job, Open, Reject, Snapshot};
use crate::bridge::{hand_over, Mailbox, Outcome, Reply, ReplyBatch};
use crate::handler::{Handler, HandlerError, HandlerFuture, Rejection};
use http::StatusCode;
use crate::request::RequestData;
use crate::socket::{Admission, Closed, Kept, Socket, SocketHandler};
use crate::stream::BodyStream;
use std::sync::Arc;

pub struct Inbox<R> {
    mailbox: Arc<Mailbox<Job<R>>>,
    replies: Arc<ReplyBatch<Outcome>>,
    pulls: Arc<ReplyBatch<PullOutcome>>,
    side: &'static str,
}

/// A handle on the same mailbox and answer batches, for a binding that answers from more than
/// one place (its dispatcher, a stream's producer, an async request's task).
impl<R> Clone for Inbox<R> {
    fn clone(&self) -> Self {
        Inbox { mailbox: self.mailbox.clone(), replies: self.replies.clone(), pulls: self.pulls.clone(), side: self.side }
    }
}

impl<R: Send + Sync + 'static> Inbox<R> {
    /// `side` names the interpreter in the log line of a request or stream it never answered.
    pub(super) fn new(mailbox: Mailbox<Job<R>>, queue_limit: usize, side: &'static str) -> Self {
        mailbox.set_queue_limit(queue_limit);
        Inbox { mailbox: Arc::new(mailbox), replies: Arc::new(ReplyBatch::default()), pulls: Arc::new(ReplyBatch::default()), side }
    }

    /// Adds the snapshot's routes to `app`: a request route posts each request here and
    /// awaits its answer; a WebSocket route posts each connection once it is open
    /// ([`Job::Open`]). When any group has hooks or exception handlers, the requests no route
    /// takes come here too, for those that must see them.
    pub(super) fn add_all(&self, app: &mut crate::App, snapshot: &Snapshot<R>) {
        let (mailbox, side) = (self.mailbox.clone(), self.side);
        let (waiting, handed) = (Arc::downgrade(&mailbox), Arc::downgrade(&mailbox));
        app.set_interpreter_stats(crate::InterpreterStats {
            queue_depth: Arc::new(move || waiting.upgrade().map_or(0, |m| m.waiting() as i64)),
            calls: Arc::new(move || handed.upgrade().map_or(0, |m| m.handed_over())),
        });
        for (route, hooks) in &snapshot.routes {
            // A group's `/` at its prefix with a slash too, unless a route of its own is there.
            let twin = route.slash_twin.as_ref().filter(|twin| {
                !snapshot.routes.iter().any(|(other, _)| &other.spec.path == *twin && other.spec.method.eq_ignore_ascii_case(&route.spec.method))
            });
            let twin_spec = twin.map(|twin| crate::RouteSpec { path: twin.clone(), include_in_schema: false, ..route.spec.clone() });
            if route.spec.websocket.is_some() {
                let handler: Arc<dyn crate::socket::SocketHandler> = Arc::new(HostSocketHandler { route: route.clone(), hooks: hooks.clone(), mailbox: mailbox.clone(), side });
                app.add_socket_route(route.spec.clone(), handler.clone());
                if let Some(spec) = twin_spec {
                    app.add_socket_route(spec, handler);
                }
            } else {
                let handler: Arc<dyn crate::Handler> = Arc::new(HostHandler { route: route.clone(), hooks: hooks.clone(), mailbox: mailbox.clone(), side });
                app.add_route(route.spec.clone(), handler.clone());
                if let Some(spec) = twin_spec {
                    app.add_route(spec, handler);
                }
            }
        }
        for spec in &snapshot.statics {
            // Checked when mounted; a directory removed since is served as empty.
            if let Err(e) = app.mount_static(spec.clone()) {
                tracing::error!(target: "ferrule::static", "{e}");
            }
        }
        if !snapshot.groups.is_empty() {
            app.set_fallback(Arc::new(HostFallback::<R> { groups: snapshot.groups.clone(), resolved: Default::default(), mailbox, side }));
        }
    }

    pub(super) fn mailbox_arc(&self) -> Arc<Mailbox<Job<R>>> {
        self.mailbox.clone()
    }

    /// The tasks that deliver answers inside the runtime; spawn once.
    pub(super) fn deliver(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let (replies, pulls) = (self.replies.clone(), self.pulls.clone());
        async move {
            tokio::join!(replies.deliver(), pulls.deliver());
        }
    }

    /// The body of a streamed response whose producer the binding keeps as `id` (its own
    /// numbering): each time the client has taken what came before, a [`Job::Pull`] asks the
    /// interpreter for more; if the response is dropped before the producer ends, a
    /// [`Job::Release`] tells the binding to close it.
    pub fn stream(&self, id: StreamId) -> BodyStream {
        BodyStream::new(Pulling::new(id, self.mailbox.clone(), self.side))
    }
}

impl<R> Inbox<R> {
    /// Where the jobs wait: `take_all` (doorbell, callback), `wait_for` (blocking).
    pub fn mailbox(&self) -> &Mailbox<Job<R>> {
        &self.mailbox
    }

    /// Queues the answer to one request; [`Inbox::flush`] sends every queued answer.
    pub fn answer(&self, reply: Reply, outcome: Outcome) {
        self.replies.push(reply, outcome);
    }

    /// Queues the answer to one pull; [`Inbox::flush`] sends it with the rest.
    pub fn answer_pull(&self, reply: PullReply, outcome: PullOutcome) {
        self.pulls.push(reply, outcome);
    }

    pub fn flush(&self) {
        self.replies.flush();
        self.pulls.flush();
    }

    /// Asks for a [`Job::Departed`]`(token)` when the client of the request `reply` answers
    /// leaves before the answer is sent; `true` when it has left already (nothing is posted
    /// then). A request is watched only when its handler asks (Node's `ctx.signal`): the
    /// runtime drops the reply's receiver when the connection closes, and the reply keeps one
    /// waker for that, so watching costs a waker per request asked for and nothing otherwise.
    /// Watching again replaces the earlier watch; an answered request posts nothing.
    pub fn watch_departure(&self, reply: &mut Reply, token: u64) -> bool
    where
        R: Send + Sync + 'static,
    {
        let departure = Arc::new(Departure { token, mailbox: Arc::downgrade(&self.mailbox) });
        let waker = std::task::Waker::from(departure);
        reply.poll_closed(&mut std::task::Context::from_waker(&waker)).is_ready()
    }

    /// Whether `other` is a handle on this same inbox (for a binding that keeps answers from
    /// several — a server's and an in-process router's — and lets go of one).
    pub fn same_as(&self, other: &Inbox<R>) -> bool {
        Arc::ptr_eq(&self.mailbox, &other.mailbox)
    }
}

/// The waker a watched reply keeps: the receiver's drop (its client left) posts the token. It
/// holds the mailbox weakly: a reply that outlives its binding's inbox posts nothing.
struct Departure<R> {
    token: u64,
    mailbox: std::sync::Weak<crate::bridge::Mailbox<Job<R>>>,
}

impl<R: Send + Sync + 'static> std::task::Wake for Departure<R> {
    fn wake(self: Arc<Self>) {
        if let Some(mailbox) = self.mailbox.upgrade() {
            let _ = mailbox.post(Job::Departed(self.token));
        }
    }
}

struct HostHandler<R> {
    route: Arc<HostRoute<R>>,
    hooks: Arc<Hooks>,
    mailbox: Arc<Mailbox<Job<R>>>,
    side: &'static str,
}

impl<R: Send + Sync + 'static> Handler for HostHandler<R> {
    fn call(&self, request: RequestData) -> HandlerFuture {
        let (route, hooks) = (self.route.clone(), self.hooks.clone());
        hand_over(&self.mailbox, self.side, |reply| Job::Call(Box::new(Call { route, hooks, request, reply, handshake: None })))
    }

    fn takes_rejection(&self, status: StatusCode, _path: &str) -> bool {
        self.hooks.sees(status)
    }

    fn rejected(&self, request: RequestData, rejection: Rejection) -> HandlerFuture {
        let (route, hooks) = (Some(self.route.clone()), self.hooks.clone());
        hand_over(&self.mailbox, self.side, |reply| Job::Reject(Box::new(Reject { route, hooks, request, rejection, reply })))
    }

    fn documented_status(&self) -> Option<http::StatusCode> {
        Some(self.route.status)
    }
}

/// The requests no route takes, for the group whose prefix their path is under.
struct HostFallback<R> {
    groups: Groups,
    /// Each group's hooks, resolved on first use.
    resolved: std::sync::Mutex<std::collections::HashMap<GroupId, Arc<Hooks>>>,
    mailbox: Arc<Mailbox<Job<R>>>,
    side: &'static str,
}

impl<R> HostFallback<R> {
    fn hooks_for(&self, path: &str) -> Arc<Hooks> {
        let group = self.groups.for_path(path);
        super::lock(&self.resolved).entry(group).or_insert_with(|| self.groups.resolve(group)).clone()
    }
}

impl<R: Send + Sync + 'static> Handler for HostFallback<R> {
    fn call(&self, _request: RequestData) -> HandlerFuture {
        Box::pin(std::future::ready(Err(HandlerError::new("the fallback answers only refused requests"))))
    }

    fn takes_rejection(&self, status: StatusCode, path: &str) -> bool {
        self.hooks_for(path).sees(status)
    }

    fn rejected(&self, request: RequestData, rejection: Rejection) -> HandlerFuture {
        let hooks = self.hooks_for(&request.path);
        hand_over(&self.mailbox, self.side, |reply| Job::Reject(Box::new(Reject { route: None, hooks, request, rejection, reply })))
    }
}

struct HostSocketHandler<R> {
    route: Arc<HostRoute<R>>,
    hooks: Arc<Hooks>,
    mailbox: Arc<Mailbox<Job<R>>>,
    side: &'static str,
}

impl<R: Send + Sync + 'static> SocketHandler for HostSocketHandler<R> {
    /// With `on_request` or `pre_handler` hooks, the handshake goes to the interpreter first as
    /// a [`Job::Call`] of the WebSocket route: the binding runs the hooks, and where the
    /// handler would run it answers 101 (`HostRoute::spec.websocket` tells it which it is). A
    /// hook's own answer refuses the upgrade. Without such hooks no job is made.
    ///
    /// The admission keeps the [`Handshake`] the call carries, for the socket's [`Job::Open`].
    fn admission(&self, request: &RequestData) -> Option<Admission> {
        if self.hooks.on_request.is_empty() && self.hooks.pre_handler.is_empty() {
            return None;
        }
        let (route, hooks, request) = (self.route.clone(), self.hooks.clone(), request.clone());
        let handshake = Handshake::new(&self.mailbox);
        let shared = Some(handshake.clone());
        let answer = hand_over(&self.mailbox, self.side, |reply| Job::Call(Box::new(Call { route, hooks, request, reply, handshake: shared })));
        Some(Admission::new(answer).keeping(handshake))
    }

    fn open_admitted(&self, request: RequestData, socket: Socket, kept: Kept) {
        let handshake = kept.downcast::<Arc<Handshake<R>>>().ok().map(|handshake| handshake.open());
        self.post_open(request, socket, handshake);
    }

    fn open(&self, request: RequestData, socket: Socket) {
        self.post_open(request, socket, None);
    }
}

impl<R: Send + Sync + 'static> HostSocketHandler<R> {
    fn post_open(&self, request: RequestData, socket: Socket, handshake: Option<u64>) {
        // Arrivals wake the interpreter through the same mailbox as requests, so a burst of
        // messages and a burst of requests share one wake-up. The wake runs on the runtime's
        // thread that read the message.
        let mailbox = Arc::downgrade(&self.mailbox);
        socket.on_arrival(Box::new(move |id| {
            if let Some(mailbox) = mailbox.upgrade() {
                let _ = mailbox.post_from_runtime(Job::Socket(id));
            }
        }));
        // Posted on the runtime's thread that upgraded the connection, and rung with the other
        // jobs once the runtime is idle. `ws-connect` (server on one core), CPU-µs a connection:
        // Node 64–68 → 58–59 (context switches 1.8 → 0.95), Ruby 53–56 → 51–52 (2.8 → 2.0),
        // Python 51–52 either way (2.1 → 1.1).
        let open = Job::Open(Box::new(Open { route: self.route.clone(), request, socket: socket.clone(), handshake }));
        if self.mailbox.post_from_runtime(open).is_err() {
            socket.close_with(Closed::new(1001, "server shutting down"));
        }
    }
}
