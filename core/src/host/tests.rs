use super::*;
use crate::bridge::Waited;
use std::sync::Arc;
use std::io::{Read, Write};
use std::sync::atomic::AtomicBool;

fn host() -> Host<&'static str> {
    Host::new(AppConfig::default()).unwrap()
}

#[test]
fn a_route_mistake_is_refused_by_its_declaration() {
    let host = host();
    host.declare(RouteSpec::get("/users/{id:int}"), 200, "a").unwrap();
    let cases = [
        (RouteSpec::get("/users/{id:int}"), 200, "GET /users/{id:int} is declared twice"),
        (RouteSpec::get("/users/:id"), 200, "already declared as GET /users/{id:int}"),
        (RouteSpec::post("/users/{name}"), 200, "matches the same paths as /users/{id:int}"),
        (RouteSpec::get("/files/*"), 200, "write `{rest:path}`"),
        (RouteSpec::get("/n/{n:integer}"), 200, "unknown type `integer`"),
        (RouteSpec::get("/created"), 65736, "65736 is not an HTTP status"),
        (RouteSpec::get("/continue"), 100, "100 is not an HTTP status"),
    ];
    for (spec, status, expected) in cases {
        let error = host.declare(spec, status, "b").err().expect("refused");
        assert!(error.is_usage() && error.to_string().contains(expected), "{error} (wanted {expected:?})");
    }
    let unknown = host.declare_json(GroupId::APP, r#"{"method": "GET", "path": "/x", "bodyy": {}}"#, 200, "c").err().unwrap();
    assert!(unknown.to_string().starts_with("GET /x: unknown field `bodyy`"), "{unknown}");
    // Found by a README walk: a wrong-typed option named neither itself nor its route.
    let wrong = host.declare_json(GroupId::APP, r#"{"method": "POST", "path": "/y", "timeout_ms": "x"}"#, 200, "d").err().unwrap();
    assert_eq!(wrong.to_string(), "POST /y: timeout_ms: invalid type: string \"x\", expected a whole number of 0 or more");
    assert_eq!(host.routes().len(), 1, "a refused route is not kept");
    assert!(Host::<()>::from_json(r#"{"body_limt": 5}"#).err().unwrap().to_string().starts_with("app settings: unknown field `body_limt`"));
}

fn get(port: u16, path: &str) -> String {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn requests_reach_the_mailbox_and_the_stop_protocol_ends_every_consumer() {
    let host = host();
    host.declare(RouteSpec::get("/hello/{name}"), 201, "hello").unwrap();
    let serving = host.serve(Listen::Address { host: "127.0.0.1", port: 0 }, Some(1), Wake::Blocking, "the test thread").unwrap();
    assert!(matches!(host.serve(Listen::Address { host: "127.0.0.1", port: 0 }, Some(1), Wake::Blocking, "x"), Err(HostError::AlreadyServing)));

    let taken = std::thread::spawn({
        let serving = serving.clone();
        move || {
            let (mut jobs, never) = (Vec::new(), AtomicBool::new(false));
            let mut answered = 0;
            while serving.mailbox().wait_for(&mut jobs, 8, &never) == Waited::Jobs {
                for job in jobs.drain(..) {
                    let Job::Call(call) = job else { panic!("no stream was started") };
                    let name = call.request.path_param("name").cloned();
                    let body = format!("{} {:?} {}", call.route.data, name, call.route.status.as_u16());
                    serving.answer(call.reply, Ok(crate::Response::text(body).with_status(call.route.status)));
                    answered += 1;
                }
                serving.flush();
            }
            answered
        }
    });
    let answer = get(serving.port(), "/hello/ada");
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert!(answer.ends_with("hello Some(Str(\"ada\")) 201"), "{answer}");
    assert!(serving.outcome().is_none());
    serving.stop();
    assert_eq!(taken.join().unwrap(), 1, "the consumer returns once the mailbox closes");
    let mut poll = libc::pollfd { fd: serving.stopped_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd.
    assert_eq!(unsafe { libc::poll(&mut poll, 1, 1000) }, 1, "the stopped descriptor is readable");
    assert_eq!(serving.outcome(), Some(Ok(())));
    let again = host.serve(Listen::Address { host: "127.0.0.1", port: 0 }, Some(1), Wake::Blocking, "x").unwrap();
    again.stop();
}

#[test]
fn a_port_in_use_is_an_error_never_a_shared_socket() {
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port();
    let error = host().serve(Listen::Address { host: "127.0.0.1", port }, Some(1), Wake::Blocking, "x").err().unwrap();
    assert_eq!(error.os_error(), Some(libc::EADDRINUSE));
    assert_eq!(error.to_string(), format!("cannot listen on 127.0.0.1:{port}: the port is in use by another process (stop it, or choose another port)"));
}

#[test]
fn in_process_requests_run_the_whole_stack_on_the_calling_thread() {
    let host = host();
    host.declare(RouteSpec::get("/items/{id:int}"), 200, "item").unwrap();
    let client = host.in_process(Wake::Blocking).unwrap();
    let run = |uri: &str| {
        let exchange = client.send(http::Request::get(uri).body(bytes::Bytes::new()).unwrap());
        let mut calls = Vec::new();
        while !exchange.is_done() {
            if client.wait(&exchange, &mut calls) == Waited::Jobs {
                for job in calls.drain(..) {
                    let Job::Call(call) = job else { panic!("no stream was started") };
                    let id = call.request.path_param("id").and_then(crate::Value::as_i64).unwrap();
                    client.answer(call.reply, crate::Response::json(&serde_json::json!({"id": id, "route": call.route.data})));
                }
                client.flush();
            }
        }
        exchange.take().unwrap()
    };
    let found = run("/items/7");
    assert_eq!((found.status, &found.body[..]), (http::StatusCode::OK, &br#"{"id":7,"route":"item"}"#[..]));
    let invalid = run("/items/seven");
    assert_eq!(invalid.status, http::StatusCode::UNPROCESSABLE_ENTITY, "validated in Rust, the handler never called");
    assert_eq!(run("/nowhere").status, http::StatusCode::NOT_FOUND);
}

/// Sends `uri` (`method`) through `client`, answering every job with `answer`; returns the
/// status, the `x-answered-by` header and what the jobs were.
fn exchange(client: &InProcess<&'static str>, method: &str, uri: &str, answer: impl Fn(&Job<&'static str>) -> crate::Response) -> (u16, Option<String>, Vec<String>) {
    let exchange = client.send(http::Request::builder().method(method).uri(uri).body(bytes::Bytes::new()).unwrap());
    let (mut jobs, mut seen) = (Vec::new(), Vec::new());
    while !exchange.is_done() {
        if client.wait(&exchange, &mut jobs) == Waited::Jobs {
            for job in jobs.drain(..) {
                let response = answer(&job);
                match job {
                    Job::Call(call) => {
                        seen.push(format!("call {} hooks {:?}/{:?}", call.route.data, call.hooks.on_request, call.hooks.pre_handler));
                        client.answer(call.reply, Ok(response));
                    }
                    Job::Reject(reject) => {
                        let allow = reject.rejection.headers.get("allow").map(|v| v.to_str().unwrap().to_owned());
                        let route = reject.route.as_ref().map_or("none", |r| r.data);
                        seen.push(format!("reject {} by {route} allow {allow:?} hooks {:?}", reject.rejection.problem.status, reject.hooks.on_request));
                        client.answer(reject.reply, Ok(response));
                    }
                    _ => unreachable!("no streams or sockets here"),
                }
            }
            client.flush();
        }
    }
    let answer = exchange.take().unwrap();
    let by = answer.headers.get("x-answered-by").map(|v| v.to_str().unwrap().to_owned());
    (answer.status.as_u16(), by, seen)
}

#[test]
fn hooks_ride_with_each_call_and_refused_requests_reach_the_language_only_when_it_must_see_them() {
    let host = host();
    let admin = host.group(GroupId::APP, "/admin").unwrap();
    let open = host.group(GroupId::APP, "/open").unwrap();
    host.declare_in(admin, RouteSpec::get("/items/{id:int}"), 200, "admin item").unwrap();
    host.declare_in(open, RouteSpec::get("/items/{id:int}"), 200, "open item").unwrap();
    host.hook(GroupId::APP, Phase::PreHandler, 0).unwrap();
    host.hook(admin, Phase::OnRequest, 1).unwrap();
    host.catch(open, Catch::Status(404)).unwrap();
    let client = host.in_process(Wake::Blocking).unwrap();
    let by_language = |_: &Job<&'static str>| crate::Response::text("from the language").with_header(http::HeaderName::from_static("x-answered-by"), http::HeaderValue::from_static("language"));

    let (status, _, seen) = exchange(&client, "GET", "/admin/items/7", by_language);
    assert_eq!((status, seen), (200, vec!["call admin item hooks [1]/[0]".to_owned()]));

    // The admin group's on_request hook must see a request its route refused.
    let (status, by, seen) = exchange(&client, "GET", "/admin/items/seven", by_language);
    assert_eq!((status, by.as_deref()), (200, Some("language")));
    assert_eq!(seen, vec!["reject 422 by admin item allow None hooks [1]".to_owned()]);
    // So must it a path under its prefix that no route takes, and a method the path does not take.
    let (status, _, seen) = exchange(&client, "GET", "/admin/missing", by_language);
    assert_eq!((status, seen), (200, vec!["reject 404 by none allow None hooks [1]".to_owned()]));
    let (_, _, seen) = exchange(&client, "DELETE", "/admin/items/7", by_language);
    assert_eq!(seen, vec!["reject 405 by none allow Some(\"GET, HEAD\") hooks [1]".to_owned()]);

    // The open group has no such hook: its 422 is the core's alone; its 404 is caught.
    let (status, by, seen) = exchange(&client, "GET", "/open/items/seven", by_language);
    assert_eq!((status, by, seen.len()), (422, None, 0));
    let (_, by, _) = exchange(&client, "GET", "/open/missing", by_language);
    assert_eq!(by.as_deref(), Some("language"));
    // A path under no group with a hook or a catch: the core answers.
    let (status, by, seen) = exchange(&client, "GET", "/elsewhere", by_language);
    assert_eq!((status, by, seen.len()), (404, None, 0));
    // The language may give the core's answer back: the problem, with its headers.
    let (status, by, _) = exchange(&client, "DELETE", "/admin/items/7", |job| match job {
        Job::Reject(reject) => reject.rejection.response(),
        _ => unreachable!(),
    });
    assert_eq!((status, by), (405, None));
}

#[test]
fn a_groups_slash_route_is_served_at_its_prefix_with_and_without_the_slash() {
    let host = host();
    let notes = host.group(GroupId::APP, "/notes").unwrap();
    let tags = host.group(GroupId::APP, "/tags").unwrap();
    host.declare_in(notes, RouteSpec::get("/"), 200, "notes").unwrap();
    host.declare_in(tags, RouteSpec::get(""), 200, "tags").unwrap();
    // A route of its own at the twin path keeps it.
    host.declare(RouteSpec::get("/notes/"), 200, "own").unwrap();
    let client = host.in_process(Wake::Blocking).unwrap();
    let by_language = |_: &Job<&'static str>| crate::Response::text("ok");
    for (path, route) in [("/notes", "notes"), ("/notes/", "own"), ("/tags", "tags")] {
        let (status, _, seen) = exchange(&client, "GET", path, by_language);
        assert_eq!((status, seen), (200, vec![format!("call {route} hooks []/[]")]), "{path}");
    }
    // Declared as "", only the prefix (as Fastify's).
    let (status, _, _) = exchange(&client, "GET", "/tags/", by_language);
    assert_eq!(status, 404);
}

#[test]
fn an_in_process_answer_rings_the_doorbell_of_a_caller_that_watches_one() {
    let host = host();
    host.declare(RouteSpec::get("/items/{id:int}"), 200, "item").unwrap();
    let client = host.in_process(Wake::Doorbell).unwrap();
    let doorbell = client.mailbox().doorbell_fd().unwrap();
    // Answered by Rust alone (no route): no job reaches the mailbox, yet the loop must learn
    // that its exchange is done.
    let exchange = client.send(http::Request::get("/nowhere").body(bytes::Bytes::new()).unwrap());
    let mut watched = libc::pollfd { fd: doorbell, events: libc::POLLIN, revents: 0 };
    assert_eq!(unsafe { libc::poll(&mut watched, 1, 10_000) }, 1, "the doorbell rang");
    let mut jobs = Vec::new();
    client.mailbox().take_all(&mut jobs);
    assert!(jobs.is_empty());
    assert_eq!(exchange.take().unwrap().status, http::StatusCode::NOT_FOUND);
}

/// A consumer thread playing the interpreter: every call starts stream 7, whose producer gives
/// `chunks` one per pull, then ends (or, if `chunks` is `None`, gives 64 KiB chunks forever).
/// Returns what it saw: "pull" per pull, "release" for a release; `pulls` counts as it goes.
/// What a stream consumer has seen so far, for a test to wait on.
#[derive(Default)]
struct JobCounts {
    pulls: std::sync::atomic::AtomicUsize,
    releases: std::sync::atomic::AtomicUsize,
}

fn stream_consumer(serving: Arc<Serving<&'static str>>, chunks: Option<usize>, counts: Arc<JobCounts>) -> std::thread::JoinHandle<Vec<&'static str>> {
    std::thread::spawn(move || {
        let (mut jobs, never, mut seen, mut given) = (Vec::new(), AtomicBool::new(false), Vec::new(), 0);
        while serving.mailbox().wait_for(&mut jobs, 8, &never) == Waited::Jobs {
            for job in jobs.drain(..) {
                match job {
                    Job::Call(call) => serving.answer(call.reply, Ok(crate::Response::stream(serving.stream(7)))),
                    Job::Pull(pull) => {
                        assert_eq!(pull.stream, 7);
                        seen.push("pull");
                        counts.pulls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let end = chunks.is_some_and(|n| given == n);
                        let chunk = match chunks {
                            _ if end => Vec::new(),
                            Some(_) => vec![bytes::Bytes::from(format!("chunk {given};"))],
                            None => vec![bytes::Bytes::from(vec![b'x'; 64 * 1024])],
                        };
                        given += 1;
                        serving.answer_pull(pull.reply, Ok(Pulled { chunks: chunk, end }));
                    }
                    Job::Release(id) => {
                        assert_eq!(id, 7);
                        seen.push("release");
                        counts.releases.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                    Job::Open(_) | Job::Socket(_) | Job::Unopened(_) | Job::Reject(_) | Job::Departed(_) => unreachable!("no WebSocket routes, hooks or watches here"),
                }
            }
            serving.flush();
        }
        seen
    })
}

#[test]
fn a_stream_is_pulled_from_the_interpreter_until_its_producer_ends() {
    let host = host();
    host.declare(RouteSpec::get("/stream"), 200, "stream").unwrap();
    let serving = host.serve(Listen::Address { host: "127.0.0.1", port: 0 }, Some(1), Wake::Blocking, "the test thread").unwrap();
    let consumer = stream_consumer(serving.clone(), Some(3), Default::default());
    let answer = get(serving.port(), "/stream");
    assert!(answer.contains("transfer-encoding: chunked"), "{answer}");
    assert!(answer.contains("chunk 0;") && answer.contains("chunk 2;") && answer.ends_with("0\r\n\r\n"), "{answer}");
    serving.stop();
    assert_eq!(consumer.join().unwrap(), ["pull"; 4], "three chunks and the end; no release for an ended producer");
}

#[test]
fn a_slow_client_holds_the_producer_back_and_one_that_leaves_releases_it() {
    let host = host();
    host.declare(RouteSpec::get("/stream"), 200, "stream").unwrap();
    let serving = host.serve(Listen::Address { host: "127.0.0.1", port: 0 }, Some(1), Wake::Blocking, "the test thread").unwrap();
    let counts = Arc::new(JobCounts::default());
    let consumer = stream_consumer(serving.clone(), None, counts.clone());
    let pulls = |counts: &JobCounts| counts.pulls.load(std::sync::atomic::Ordering::SeqCst);
    let mut client = std::net::TcpStream::connect(("127.0.0.1", serving.port())).unwrap();
    write!(client, "GET /stream HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let mut first = [0u8; 256];
    let _ = client.read(&mut first).unwrap();
    // The client reads no more: the socket's buffers fill and the pulls stop.
    let mut last = usize::MAX;
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let now = pulls(&counts);
        if now == last {
            break;
        }
        last = now;
    }
    assert_eq!(pulls(&counts), last, "no pull while the client reads nothing");
    assert!(last * 64 * 1024 < 64 * 1024 * 1024, "{last} chunks pulled for a client that read 256 bytes");
    // Gone: the runtime notices at its next write and drops the response, which releases
    // the producer (before the stop closes the mailbox).
    drop(client);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while counts.releases.load(std::sync::atomic::Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    serving.stop();
    let seen = consumer.join().unwrap();
    assert_eq!(seen.last(), Some(&"release"), "{seen:?}");
    assert_eq!(seen.iter().filter(|s| **s == "release").count(), 1);
}

/// Sends `request` through `client`, answering each call with a kilobyte of JSON; returns the
/// answer and how many jobs reached the language.
fn answered_by_language(client: &InProcess<&'static str>, request: http::Request<bytes::Bytes>) -> (Answer, usize) {
    let exchange = client.send(request);
    let (mut jobs, mut entered) = (Vec::new(), 0);
    while !exchange.is_done() {
        if client.wait(&exchange, &mut jobs) == Waited::Jobs {
            for job in jobs.drain(..) {
                entered += 1;
                let Job::Call(call) = job else { panic!("only calls here") };
                client.answer(call.reply, crate::Response::json(&serde_json::json!({ "padding": "x".repeat(1024) })));
            }
            client.flush();
        }
    }
    (exchange.take().unwrap(), entered)
}

#[test]
fn the_built_in_layers_and_the_languages_hooks_add_no_entry_into_the_language() {
    let config = AppConfig {
        cors: Some(crate::CorsConfig { allow_origins: vec!["*".into()], ..Default::default() }),
        compression: Some(crate::CompressionConfig::default()),
        request_id: true,
        metrics_url: Some("/metrics".into()),
        ..AppConfig::default()
    };
    let host = Host::new(config).unwrap();
    host.declare(RouteSpec::get("/items/{id:int}"), 200, "item").unwrap();
    // Hooks in the language ride with the call; they never need an entry of their own.
    host.hook(GroupId::APP, Phase::PreHandler, 0).unwrap();
    host.hook(GroupId::APP, Phase::OnSend, 1).unwrap();
    let client = host.in_process(Wake::Blocking).unwrap();
    let get = |uri: &str| http::Request::get(uri).header("origin", "https://a.example").header("accept-encoding", "gzip").body(bytes::Bytes::new()).unwrap();

    let (served, entered) = answered_by_language(&client, get("/items/7"));
    assert_eq!(entered, 1);
    assert_eq!(served.headers["content-encoding"], "gzip", "compressed in Rust");
    assert_eq!(served.headers["access-control-allow-origin"], "*");
    assert!(served.headers.contains_key("x-request-id"));
    let preflight = http::Request::options("/items/7")
        .header("origin", "https://a.example")
        .header("access-control-request-method", "GET")
        .body(bytes::Bytes::new())
        .unwrap();
    let (answered, entered) = answered_by_language(&client, preflight);
    assert_eq!((answered.status.as_u16(), entered), (200, 0), "a preflight is the core's");
    let (metrics, entered) = answered_by_language(&client, http::Request::get("/metrics").body(bytes::Bytes::new()).unwrap());
    assert_eq!(entered, 0, "the metrics are the core's");
    let text = String::from_utf8(metrics.body.to_vec()).unwrap();
    assert!(text.contains("ferrule_interpreter_calls_total 1\n"), "{text}");
}

#[test]
fn allowed_hosts_set_after_the_routes_refuse_other_hosts_before_the_language_is_entered() {
    let host = host();
    host.declare(RouteSpec::get("/items/{id:int}"), 200, "item").unwrap();
    host.configure_json(r#"{"allowed_hosts": ["shop.example", "www.shop.test"]}"#).unwrap();
    let client = host.in_process(Wake::Blocking).unwrap();
    let get = |name: &str| http::Request::get("/items/7?x=1").header("host", name).body(bytes::Bytes::new()).unwrap();
    let (served, entered) = answered_by_language(&client, get("Shop.Example:8000"));
    assert_eq!((served.status.as_u16(), entered), (200, 1));
    let (refused, entered) = answered_by_language(&client, get("evil.example"));
    assert_eq!((refused.status.as_u16(), entered), (400, 0));
    assert!(refused.headers.contains_key("x-request-id"), "a refusal is a request like any other");
    let (moved, entered) = answered_by_language(&client, get("shop.test"));
    assert_eq!((moved.status.as_u16(), entered), (307, 0));
    assert_eq!(moved.headers["location"], "http://www.shop.test/items/7?x=1");
    host.configure_json(r#"{"www_redirect": false}"#).unwrap();
    let client = host.in_process(Wake::Blocking).unwrap();
    assert_eq!(answered_by_language(&client, get("shop.test")).0.status.as_u16(), 400);
    let refused = host.configure_json(r#"{"allowed_hosts": ["a.*.example"]}"#).err().unwrap().to_string();
    assert!(refused.starts_with("app settings: allowed_hosts: `a.*.example` is no pattern"), "{refused}");
}

#[test]
fn cors_and_compression_set_after_the_routes_reach_the_next_router_and_nothing_else_may_change() {
    let host = host();
    host.declare(RouteSpec::get("/items/{id:int}"), 200, "item").unwrap();
    host.configure_json(r#"{"cors": {"allow_origins": ["https://a.example"], "allow_origin_regex": "https://[a-z]+\\.b\\.example"}, "compression": {"min_size": 0, "gzip": true, "br": false, "zstd": false, "level": 9}}"#).unwrap();
    let client = host.in_process(Wake::Blocking).unwrap();
    let get = |origin: &str| http::Request::get("/items/7").header("origin", origin).header("accept-encoding", "br, gzip").body(bytes::Bytes::new()).unwrap();
    let (served, _) = answered_by_language(&client, get("https://api.b.example"));
    assert_eq!(served.headers["access-control-allow-origin"], "https://api.b.example");
    assert_eq!(served.headers["content-encoding"], "gzip", "gzip alone, as set");
    let (served, _) = answered_by_language(&client, get("https://c.example"));
    assert!(!served.headers.contains_key("access-control-allow-origin"));

    let refused = |settings: &str| host.configure_json(settings).err().unwrap().to_string();
    assert_eq!(refused(r#"{"timeout_ms": 5}"#), "app settings: timeout_ms is set when the app is made; only cors, compression, allowed_hosts and www_redirect may be set later");
    assert!(refused(r#"{"cors": {"allow_origin": ["*"]}}"#).starts_with("app settings: cors: unknown field `allow_origin`"));
    assert!(refused(r#"{"cors": {"allow_origin_regex": "("}}"#).contains("is not a regular expression"));
    assert!(refused(r#"{"compression": {"level": 40}}"#).contains("compression level must be between 0 and 22"));
    // A refused change leaves the settings as they were.
    assert_eq!(host.config().compression.unwrap().level, Some(9));
    host.configure_json(r#"{"cors": null}"#).unwrap();
    assert!(host.config().cors.is_none());

    let serving = host.serve(Listen::Address { host: "127.0.0.1", port: 0 }, Some(1), Wake::Blocking, "the test thread").unwrap();
    assert!(refused(r#"{"cors": null}"#).contains("the app is serving"));
    serving.stop();
}

/// A job is moved several times on its way to the interpreter (see [`Job`]): a pointer each
/// time, never the request itself.
#[test]
fn a_job_moves_as_a_pointer_not_as_its_request() {
    let size = std::mem::size_of::<Job<&'static str>>();
    assert!(size <= 64, "a job is {size} bytes");
}

#[test]
fn a_watched_request_whose_client_leaves_posts_its_token_and_an_answered_one_posts_nothing() {
    let host = host();
    host.declare(RouteSpec::get("/slow"), 200, "slow").unwrap();
    let serving = host.serve(Listen::Address { host: "127.0.0.1", port: 0 }, Some(1), Wake::Blocking, "the test thread").unwrap();
    let (mut jobs, never) = (Vec::new(), AtomicBool::new(false));
    let next_call = |jobs: &mut Vec<Job<&'static str>>| -> Box<Call<&'static str>> {
        assert_eq!(serving.mailbox().wait_for(jobs, 1, &never), Waited::Jobs);
        match jobs.pop() {
            Some(Job::Call(call)) => call,
            _ => panic!("a call first"),
        }
    };
    // Watched, then answered: the answer arrives and nothing else is posted.
    let answered = std::thread::spawn({
        let port = serving.port();
        move || get(port, "/slow")
    });
    let mut call = next_call(&mut jobs);
    assert!(!serving.watch_departure(&mut call.reply, 7), "its client is still there");
    serving.answer(call.reply, Ok(crate::Response::text("done")));
    serving.flush();
    assert!(answered.join().unwrap().ends_with("done"));
    // Watched, then its client leaves: the token comes back as a job of its own.
    let mut client = std::net::TcpStream::connect(("127.0.0.1", serving.port())).unwrap();
    write!(client, "GET /slow HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let mut call = next_call(&mut jobs);
    assert!(!serving.watch_departure(&mut call.reply, 8));
    drop(client);
    assert_eq!(serving.mailbox().wait_for(&mut jobs, 8, &never), Waited::Jobs);
    let tokens: Vec<u64> = jobs.drain(..).map(|job| match job {
        Job::Departed(token) => token,
        _ => panic!("only the departure is posted"),
    }).collect();
    assert_eq!(tokens, [8], "the answered request's watch posted nothing");
    assert!(crate::bridge::is_abandoned(&call.reply));
    // Watching a request whose client has left already says so and posts nothing.
    assert!(serving.watch_departure(&mut call.reply, 9));
    serving.stop();
    assert_eq!(serving.mailbox().wait_for(&mut jobs, 8, &never), Waited::Closed);
    assert!(jobs.is_empty(), "{} jobs posted after the departure", jobs.len());
}

/// A handshake as a client sends it, with `extra` header lines; the first line of the answer.
fn handshake(port: u16, extra: &str) -> (std::net::TcpStream, String) {
    let mut client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(client, "GET /live HTTP/1.1\r\nhost: x\r\nconnection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n{extra}\r\n").unwrap();
    let mut head = [0u8; 12];
    client.read_exact(&mut head).unwrap();
    (client, String::from_utf8_lossy(&head).into_owned())
}

#[test]
fn a_handshake_the_hooks_see_is_followed_by_its_open_or_by_unopened_once_answered() {
    let host = host();
    host.declare(RouteSpec::websocket("/live", &[]), 200, "live").unwrap();
    host.hook(GroupId::APP, Phase::OnRequest, 0).unwrap();
    let serving = host.serve(Listen::Address { host: "127.0.0.1", port: 0 }, Some(1), Wake::Blocking, "the test thread").unwrap();
    let (mut jobs, never) = (Vec::new(), AtomicBool::new(false));
    let next = |jobs: &mut Vec<Job<&'static str>>| {
        if jobs.is_empty() {
            assert_eq!(serving.mailbox().wait_for(jobs, 1, &never), Waited::Jobs);
        }
        jobs.remove(0)
    };
    let port = serving.port();

    // Refused: the binding answers 401 and lets go of its call; then, and only then, Unopened.
    let refused = std::thread::spawn(move || handshake(port, "").1);
    let Job::Call(call) = next(&mut jobs) else { panic!("the handshake's call first") };
    let refused_id = call.handshake.as_ref().expect("a handshake").id();
    let Call { reply, handshake: kept, .. } = *call;
    serving.answer(reply, Ok(crate::Response::text("no key").with_status(http::StatusCode::UNAUTHORIZED)));
    serving.flush();
    assert_eq!(refused.join().unwrap(), "HTTP/1.1 401");
    serving.mailbox().take_all(&mut jobs);
    assert!(jobs.is_empty(), "nothing is posted while the binding holds the call");
    drop(kept);
    assert!(matches!(next(&mut jobs), Job::Unopened(id) if id == refused_id));

    // Let through: the socket's Open names the handshake, and no Unopened follows.
    let admitted = std::thread::spawn(move || handshake(port, "x-key: k\r\n"));
    let Job::Call(call) = next(&mut jobs) else { panic!("the handshake's call first") };
    let admitted_id = call.handshake.as_ref().expect("a handshake").id();
    assert_ne!(admitted_id, refused_id);
    serving.answer(call.reply, Ok(crate::Response::new(http::StatusCode::SWITCHING_PROTOCOLS)));
    serving.flush();
    let (client, head) = admitted.join().unwrap();
    assert_eq!(head, "HTTP/1.1 101");
    let Job::Open(open) = next(&mut jobs) else { panic!("the socket opens") };
    assert_eq!(open.handshake, Some(admitted_id));
    drop((open, client));
    serving.stop();
    while serving.mailbox().wait_for(&mut jobs, 8, &never) == Waited::Jobs {
        assert!(jobs.drain(..).all(|job| !matches!(job, Job::Unopened(_) | Job::Call(_))), "an opened handshake posts no Unopened");
    }
}
