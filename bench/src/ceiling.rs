//! The ceiling: hyper on the same tokio runtime as the Rust servers under test, with no
//! routing, no parsing and no handler — every request, whatever its method and path, gets the
//! same small JSON answer. What oha drives against it is the most requests/s this machine can
//! push through the stack Ferrule stands on, so the report can say how much of that each
//! framework keeps.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::future::Future;
use tokio::net::TcpListener;

/// The one answer: a body as small as the smallest echo, typed like the others' JSON.
pub const BODY: &[u8] = br#"{"ok":true}"#;

/// Answers any request with [`BODY`]. The request body is read to its end first: a POST's
/// bytes cost every framework their reading, so leaving them unread would flatter the ceiling
/// (and hyper would have to drain or drop them before the next request on the connection).
async fn answer(request: hyper::Request<Incoming>) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    // A body that breaks off is the client's problem; the answer is the same either way.
    let _ = request.into_body().collect().await;
    let response = hyper::Response::builder()
        .status(hyper::StatusCode::OK)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from_static(BODY)))
        .expect("a constant response is valid");
    Ok(response)
}

/// Accepts on `listener` until `stop` completes. HTTP/1.1 only (what oha speaks), each
/// connection with TCP_NODELAY as the core sets it, on its own task.
pub async fn serve(listener: TcpListener, stop: impl Future<Output = ()>) -> Result<(), String> {
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            biased;
            _ = &mut stop => return Ok(()),
            accepted = listener.accept() => accepted,
        };
        // A client that gave up between connecting and being accepted costs nothing.
        let Ok((stream, _)) = accepted else { continue };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(answer);
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// Sends `requests` on one connection (the last one asking to close) and returns all it read.
    fn exchange(requests: &str) -> String {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = runtime.spawn(serve(listener, async {
            let _ = stopped.await;
        }));
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
        stream.write_all(requests.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let _ = stop.send(());
        runtime.block_on(server).unwrap().unwrap();
        answer
    }

    #[test]
    fn any_method_and_path_gets_the_same_small_json_answer() {
        let answer = exchange(concat!(
            "GET /health HTTP/1.1\r\nhost: x\r\n\r\n",
            "DELETE /no/such/route?x=1 HTTP/1.1\r\nhost: x\r\n\r\n",
            "PATCH / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        ));
        assert_eq!(answer.matches("HTTP/1.1 200 OK\r\n").count(), 3, "{answer}");
        assert_eq!(answer.matches("content-type: application/json\r\n").count(), 3, "{answer}");
        assert!(answer.ends_with(r#"{"ok":true}"#), "{answer}");
    }

    #[test]
    fn a_post_body_is_read_to_its_end_before_the_next_request() {
        // Were the body left unread, its bytes would be parsed as the next request's head.
        let body = "x".repeat(100_000);
        let requests = format!(
            "POST /json/large HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}\
             POST /form HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n\
             GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let answer = exchange(&requests);
        assert_eq!(answer.matches("HTTP/1.1 200 OK\r\n").count(), 3, "{answer}");
        assert!(!answer.contains("400"), "{answer}");
    }
}
