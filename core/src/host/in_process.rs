//! Requests served without a socket: the whole stack (routing, validation, middleware, problem
//! responses) runs on the router in memory, for in-process test clients and Rack's `call(env)`.
//!
//! The calling thread is the interpreter's own, so it cannot simply block on the answer: the
//! handler it waits for needs that interpreter. It sends the request ([`InProcess::send`]),
//! then takes calls from the mailbox and runs them until its exchange is done — the same loop
//! a worker thread runs, ended by the exchange instead of by a stop.

use super::{lock, Call, HostError, HostRoute};
use crate::app::App;
use crate::bridge::{hand_over, Mailbox, Outcome, Reply, ReplyBatch, Waited};
use crate::handler::{Handler, HandlerFuture};
use crate::request::RequestData;
use crate::spec::AppConfig;
use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use http_body_util::BodyExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tower::ServiceExt;

pub struct InProcess<R> {
    runtime: tokio::runtime::Runtime,
    router: axum::Router,
    mailbox: Arc<Mailbox<Call<R>>>,
    replies: Arc<ReplyBatch<Outcome>>,
}

/// A response as the in-process caller gets it.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// One request on its way through the router.
pub struct Exchange {
    /// Set when the answer is in, and by an interpreter that wants its thread back.
    wake: Arc<AtomicBool>,
    answer: Arc<Mutex<Option<Answer>>>,
}

impl Exchange {
    pub fn is_done(&self) -> bool {
        lock(&self.answer).is_some()
    }

    /// What the waiting thread's wait watches: set when the answer arrives.
    pub fn wake_flag(&self) -> &AtomicBool {
        &self.wake
    }

    pub fn take(&self) -> Option<Answer> {
        lock(&self.answer).take()
    }
}

struct InProcessHandler<R> {
    route: Arc<HostRoute<R>>,
    mailbox: Arc<Mailbox<Call<R>>>,
}

impl<R: Send + Sync + 'static> Handler for InProcessHandler<R> {
    fn call(&self, request: RequestData) -> HandlerFuture {
        let route = self.route.clone();
        hand_over(&self.mailbox, "the in-process caller", |reply| Call { route, request, reply })
    }
}

impl<R: Send + Sync + 'static> InProcess<R> {
    pub(super) fn new(config: &AppConfig, routes: &[Arc<HostRoute<R>>]) -> Result<Self, HostError> {
        let mailbox = Arc::new(Mailbox::new());
        mailbox.set_queue_limit(config.max_queued_requests);
        let mut app = App::with_config(config.clone());
        for route in routes {
            app.add_route(route.spec.clone(), Arc::new(InProcessHandler { route: route.clone(), mailbox: mailbox.clone() }));
        }
        let router = app.into_router().map_err(|e| HostError::Route(e.0))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("ferrule-in-process")
            .enable_all()
            .build()
            .map_err(|e| HostError::Runtime(format!("cannot start the runtime: {e}")))?;
        let replies = Arc::new(ReplyBatch::default());
        runtime.spawn(replies.clone().deliver());
        Ok(InProcess { runtime, router, mailbox, replies })
    }

    /// Starts `request` through the router; the caller then runs [`InProcess::wait`] (or its
    /// own loop over [`InProcess::mailbox`]) until the exchange is done.
    pub fn send(&self, request: http::Request<Bytes>) -> Exchange {
        let exchange = Exchange { wake: Arc::new(AtomicBool::new(false)), answer: Arc::new(Mutex::new(None)) };
        let (wake, answer, router, mailbox) = (exchange.wake.clone(), exchange.answer.clone(), self.router.clone(), self.mailbox.clone());
        self.runtime.spawn(async move {
            let response = router.oneshot(request.map(axum::body::Body::from)).await.unwrap_or_else(|never| match never {});
            let (parts, body) = response.into_parts();
            let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            *lock(&answer) = Some(Answer { status: parts.status, headers: parts.headers, body });
            wake.store(true, Ordering::Release);
            mailbox.interrupt_waiters();
        });
        exchange
    }

    /// Waits (blocking) for calls or the end of `exchange`: `Jobs` with calls to run,
    /// `Interrupted` when the exchange is done or the flag was set by the interpreter.
    pub fn wait(&self, exchange: &Exchange, into: &mut Vec<Call<R>>) -> Waited {
        self.mailbox.wait_for(into, 64, &exchange.wake)
    }

    /// Wakes every thread in [`InProcess::wait`] (to see its flag).
    pub fn interrupt(&self, exchange: &Exchange) {
        exchange.wake.store(true, Ordering::Release);
        self.mailbox.interrupt_waiters();
    }

    pub fn mailbox(&self) -> &Mailbox<Call<R>> {
        &self.mailbox
    }

    pub fn answer(&self, reply: Reply, outcome: Outcome) {
        self.replies.push(reply, outcome);
    }

    pub fn flush(&self) {
        self.replies.flush();
    }
}
