//! Requests served without a socket: the whole stack (routing, validation, middleware, problem
//! responses) runs on the router in memory, for in-process test clients and Rack's `call(env)`.
//!
//! The calling thread is the interpreter's own, so it cannot simply block on the answer: the
//! handler it waits for needs that interpreter. It sends the request ([`InProcess::send`]),
//! then takes calls from the mailbox and runs them until its exchange is done — the same loop
//! a worker thread runs, ended by the exchange instead of by a stop. The mailbox wakes its
//! consumer as a server's would ([`Wake`]): a thread blocked in [`InProcess::wait`] (Ruby's
//! Rack `call`), an event loop watching the doorbell (Python's test client), a callback onto
//! the JavaScript thread (Node's `inject`). An answer arriving wakes it the same way, so one
//! loop sees both its jobs and its finished exchanges.

use super::inbox::Inbox;
use super::serving::Wake;
use super::{lock, HostError, Job};
use crate::app::App;
use crate::bridge::{Mailbox, Waited};
use crate::log::Logs;
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
    inbox: Inbox<R>,
    /// Set while the app closes: requests are answered as a server answers them then
    /// ([`crate::Closing`]).
    refusing: AtomicBool,
    /// `trusted_proxies`: a caller's address among them has its requests' `X-Forwarded-*`
    /// read, as a server's peer has (a test client's proxy headers; a Rack server's).
    proxies: Option<crate::forwarded::TrustedProxies>,
}

/// Its calls are taken and answered through its [`Inbox`], as a server's are.
impl<R> std::ops::Deref for InProcess<R> {
    type Target = Inbox<R>;

    fn deref(&self) -> &Inbox<R> {
        &self.inbox
    }
}

/// A response as the in-process caller gets it: the whole body, collected.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// The body broke off before its end (a stream whose producer failed): `body` is what
    /// came before, as a client on a socket would have received it.
    pub cut_off: bool,
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

impl<R: Send + Sync + 'static> InProcess<R> {
    pub(super) fn new(config: &AppConfig, snapshot: &super::Snapshot<R>, logs: &Logs, wake: Wake) -> Result<Self, HostError> {
        let mailbox: Mailbox<Job<R>> = wake.mailbox()?;
        let inbox = Inbox::new(mailbox, config.max_queued_requests, "the in-process caller");
        let mut app = App::with_config(config.clone());
        inbox.add_all(&mut app, snapshot);
        let router = app.into_router().map_err(|e| HostError::Route(e.0))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("ferrule-in-process")
            .on_thread_start(logs.on_thread_start())
            .enable_all()
            .build()
            .map_err(|e| HostError::Runtime(format!("cannot start the runtime: {e}")))?;
        runtime.spawn(inbox.deliver());
        let proxies = config.trusted_proxies().map_err(HostError::Settings)?;
        Ok(InProcess { runtime, router, inbox, refusing: AtomicBool::new(false), proxies })
    }

    /// Starts `request` through the router; the caller then runs [`InProcess::wait`] (or its
    /// own loop over [`InProcess::mailbox`]) until the exchange is done.
    pub fn send(&self, mut request: http::Request<Bytes>) -> Exchange {
        if request.extensions().get::<crate::ClientAddr>().is_none() {
            request.extensions_mut().insert(crate::ClientAddr::IN_PROCESS);
        }
        if let Some(proxies) = &self.proxies {
            let caller = request.extensions().get::<crate::ClientAddr>().map_or(crate::ClientAddr::IN_PROCESS.0, |client| client.0);
            if proxies.trusts(caller.ip()) {
                crate::forwarded::believe(proxies, &mut request, caller);
            }
        }
        let exchange = Exchange { wake: Arc::new(AtomicBool::new(false)), answer: Arc::new(Mutex::new(None)) };
        let (wake, answer, router, mailbox) = (exchange.wake.clone(), exchange.answer.clone(), self.router.clone(), self.inbox.mailbox_arc());
        let refused = self.refusing.load(Ordering::Acquire).then(|| crate::server::closing_answer(request.version()));
        self.runtime.spawn(async move {
            let response = match refused {
                Some(refused) => refused,
                None => router.oneshot(request.map(axum::body::Body::from)).await.unwrap_or_else(|never| match never {}),
            };
            let (mut parts, body) = response.into_parts();
            // axum gives every sized body a Content-Length; on a socket hyper leaves it out of a
            // 204 or 304 (RFC 9110 §8.6), and so must the answer a Rack server or test client
            // sends on (Rack::Lint refuses it).
            if parts.status == http::StatusCode::NO_CONTENT || parts.status == http::StatusCode::NOT_MODIFIED {
                parts.headers.remove(http::header::CONTENT_LENGTH);
            }
            let (body, cut_off) = collect(body).await;
            *lock(&answer) = Some(Answer { status: parts.status, headers: parts.headers, body, cut_off });
            wake.store(true, Ordering::Release);
            mailbox.poke();
        });
        exchange
    }

    /// A handle on the mailbox and answer batches, for the binding's own dispatcher.
    pub fn inbox(&self) -> Inbox<R> {
        self.inbox.clone()
    }

    /// As [`super::Serving::refuse_requests`]: requests sent from now on are answered 503
    /// (`refuse`), or routed again.
    pub fn refuse_requests(&self, refuse: bool) {
        self.refusing.store(refuse, Ordering::Release);
    }

    /// Waits (blocking) for jobs or the end of `exchange`: `Jobs` with jobs to run,
    /// `Interrupted` when the exchange is done or the flag was set by the interpreter.
    pub fn wait(&self, exchange: &Exchange, into: &mut Vec<Job<R>>) -> Waited {
        self.mailbox().wait_for(into, 64, &exchange.wake)
    }

    /// Wakes every thread in [`InProcess::wait`] (to see its flag).
    pub fn interrupt(&self, exchange: &Exchange) {
        exchange.wake.store(true, Ordering::Release);
        self.mailbox().interrupt_waiters();
    }
}

/// A body to its end, or to where it broke off.
async fn collect(mut body: axum::body::Body) -> (Bytes, bool) {
    let mut collected = bytes::BytesMut::new();
    loop {
        match body.frame().await {
            None => return (collected.freeze(), false),
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    collected.extend_from_slice(&data);
                }
            }
            Some(Err(_)) => return (collected.freeze(), true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_body_that_breaks_off_is_kept_to_where_it_broke_and_said_so() {
        let chunks: Vec<Result<Bytes, std::io::Error>> = vec![Ok(Bytes::from_static(b"partial")), Err(std::io::Error::other("producer failed"))];
        let (body, cut_off) = collect(axum::body::Body::from_stream(futures_util::stream::iter(chunks))).await;
        assert_eq!((&body[..], cut_off), (&b"partial"[..], true));
        let (whole, cut_off) = collect(axum::body::Body::from("all of it")).await;
        assert_eq!((&whole[..], cut_off), (&b"all of it"[..], false));
    }
}
