//! Answers given before there is a request to answer: to a head hyper could not parse, to a
//! first line in HTTP's words that is no HTTP/1 request line, and to a head sent too slowly.
//! Each is a problem document (RFC 9457) sent with `connection: close`: with no request read,
//! the connection cannot go on.
//!
//! hyper answers a head it cannot parse itself (`on_parse_error` in its h1 `conn.rs`): 400 for
//! a bad request line or header field, 414 for a target over 64 KiB, 431 for over 100 fields
//! or a head over its 400 KiB buffer (which it closes on with the client still sending, so the
//! client may see a reset instead), each with an empty body, and it has no hook to say more.
//! An attack pass counted 62 of its malformed heads answered so. The socket ([`super::io`])
//! recognises that answer by its exact shape ([`hyper_refusal`]) and writes [`parse_problem`]
//! in its place.

use crate::problem::{Problem, PROBLEM_JSON};
use http::StatusCode;

/// The response bytes of a problem that closes the connection.
pub(crate) fn closing_problem(status: StatusCode, detail: &str) -> Vec<u8> {
    let body = Problem::status(status).with_detail(detail).body();
    let reason = status.canonical_reason().unwrap_or("Error");
    // With a Date, as every other answer has: RFC 9110 §6.6.1 asks an origin server for one on
    // every 4xx and 5xx (found by a probe: the refusals written here had none).
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let mut response = format!(
        "HTTP/1.1 {} {reason}\r\ncontent-type: {PROBLEM_JSON}\r\nconnection: close\r\ndate: {date}\r\ncontent-length: {}\r\n\r\n",
        status.as_u16(),
        body.len()
    )
    .into_bytes();
    response.extend_from_slice(&body);
    response
}

/// What hyper's answer to an unparsable head becomes.
pub(crate) fn parse_problem(status: StatusCode) -> Vec<u8> {
    let detail = match status {
        StatusCode::URI_TOO_LONG => "The request target is longer than the server reads.",
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => "The request head has more header fields than the server reads, or is too large.",
        _ => "The request head is not HTTP/1.1: its request line or a header field is malformed (RFC 9112).",
    };
    closing_problem(status, detail)
}

/// The status lines hyper answers an unparsable head with, each after its version and followed
/// by the headers of [`HYPER_VERSIONS`], a date and the blank line.
const HYPER_REFUSALS: [(StatusCode, &[u8]); 3] = [
    (StatusCode::BAD_REQUEST, b"400 Bad Request\r\n"),
    (StatusCode::URI_TOO_LONG, b"414 URI Too Long\r\n"),
    (StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, b"431 Request Header Fields Too Large\r\n"),
];
/// `HTTP/1.1`, closing; and `HTTP/1.0`, on a connection kept alive after an HTTP/1.0 request
/// (`Connection: keep-alive`, as ApacheBench's `-k` sends), where hyper writes no `connection`
/// line as HTTP/1.0 closes by default.
const HYPER_VERSIONS: [(&[u8], &[u8]); 2] =
    [(b"HTTP/1.1 ", b"connection: close\r\ncontent-length: 0\r\ndate: "), (b"HTTP/1.0 ", b"content-length: 0\r\ndate: ")];
/// An IMF-fixdate, `Thu, 03 Dec 2026 15:21:51 GMT`: `_` is any byte, `9` a digit.
const DATE_SHAPE: &[u8; 29] = b"___, 99 ___ 9999 99:99:99 GMT";
const END: &[u8] = b"\r\n\r\n";

const fn refusal_len(version: usize, line: usize) -> usize {
    HYPER_VERSIONS[version].0.len() + HYPER_REFUSALS[line].1.len() + HYPER_VERSIONS[version].1.len() + DATE_SHAPE.len() + END.len()
}

/// The lengths of hyper's six answers (three statuses, two versions).
const REFUSAL_LENGTHS: [usize; 6] = [refusal_len(0, 0), refusal_len(0, 1), refusal_len(0, 2), refusal_len(1, 0), refusal_len(1, 1), refusal_len(1, 2)];

/// Whether a write of `len` bytes may be hyper's answer to an unparsable head: the one test
/// every HTTP/1 write that is one buffer pays (six compares, inlined); the rest of
/// [`hyper_refusal`] runs only for writes of those lengths.
#[inline]
pub(crate) fn may_be_hyper_refusal(len: usize) -> bool {
    REFUSAL_LENGTHS.contains(&len)
}

/// `Some(status)` when `bytes` are exactly hyper's answer to a head it could not parse.
pub(crate) fn hyper_refusal(bytes: &[u8]) -> Option<StatusCode> {
    let (_, headers) = HYPER_VERSIONS.iter().find(|(version, _)| bytes.starts_with(version))?;
    let rest = &bytes[HYPER_VERSIONS[0].0.len()..];
    let (status, line) = HYPER_REFUSALS.iter().find(|(_, line)| rest.starts_with(line))?;
    let rest = rest[line.len()..].strip_prefix(*headers)?;
    let (date, end) = rest.split_at_checked(DATE_SHAPE.len())?;
    let shaped = date.iter().zip(DATE_SHAPE).all(|(byte, shape)| match shape {
        b'_' => byte.is_ascii_alphabetic(),
        b'9' => byte.is_ascii_digit(),
        _ => byte == shape,
    }) && end == END;
    shaped.then_some(*status)
}

/// The answer to a first line that is not an HTTP/1 request line but is written in HTTP's words
/// (text, with `HTTP/` in it, any case); `None` for one that is not (an HTTP/2 client's broken
/// preface, a TLS hello, whose ALPN list may hold `http/1.1`, another protocol): those get no
/// answer, as an HTTP/1 response would be noise to them (RFC 9113 §3.4 asks to close on a bad
/// preface, and h2spec checks it).
/// `line`: the first line, without its end.
pub(crate) fn request_line_refusal(line: &[u8]) -> Option<(StatusCode, &'static str)> {
    if !line.iter().all(|b| matches!(b, b' '..=b'~' | b'\t' | b'\r')) {
        return None;
    }
    let at = line.windows(5).rposition(|w| w.eq_ignore_ascii_case(b"HTTP/"))?;
    // `HTTP/2`, `HTTP/3.0`: RFC 9110's one-digit major and minor, the major not 1.
    let other_major = line[..at].ends_with(b" ")
        && match &line[at + 5..] {
            [major] | [major, b'.', b'0'..=b'9'] => major.is_ascii_digit() && *major != b'1',
            _ => false,
        };
    Some(if other_major {
        // RFC 9110 §15.6.6: the major version is not supported.
        (StatusCode::HTTP_VERSION_NOT_SUPPORTED, "Requests in HTTP/1 syntax must be HTTP/1.0 or HTTP/1.1; HTTP/2 is served with prior knowledge or ALPN.")
    } else {
        (StatusCode::BAD_REQUEST, "The request line is not a method, a target and HTTP/1.x, each separated by one space (RFC 9112 §3).")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATE: &str = "Thu, 03 Dec 2026 15:21:51 GMT";

    #[test]
    fn hypers_three_answers_to_an_unparsable_head_are_recognised_and_nothing_else() {
        for (status, reason) in [(400, "Bad Request"), (414, "URI Too Long"), (431, "Request Header Fields Too Large")] {
            for answer in [
                format!("HTTP/1.1 {status} {reason}\r\nconnection: close\r\ncontent-length: 0\r\ndate: {DATE}\r\n\r\n"),
                format!("HTTP/1.0 {status} {reason}\r\ncontent-length: 0\r\ndate: {DATE}\r\n\r\n"),
            ] {
                assert_eq!(hyper_refusal(answer.as_bytes()).map(|s| s.as_u16()), Some(status), "{answer}");
                assert!(may_be_hyper_refusal(answer.len()), "{answer}");
            }
        }
        // A response a handler made: a header more, another status, a body, a head cut short.
        let not = [
            format!("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\nx: y\r\ndate: {DATE}\r\n\r\n"),
            format!("HTTP/1.1 401 Unauthorized\r\nconnection: close\r\ncontent-length: 0\r\ndate: {DATE}\r\n\r\n"),
            format!("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 2\r\ndate: {DATE}\r\n\r\n"),
            format!("HTTP/1.1 400 Bad Request\r\nconnection: keep-alive\r\ncontent-length: 0\r\ndate: {DATE}\r\n\r\n"),
            "HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\ndate: no date, just as many bytes!!\r\n\r\n".to_owned(),
            format!("HTTP/1.2 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\ndate: {DATE}\r\n\r\n"),
            format!("HTTP/1.0 400 Bad Request\r\ncontent-length: 0\r\nx: y\r\ndate: {DATE}\r\n\r\n"),
            format!("HTTP/1.0 400 Bad Request\r\ncontent-length: 0\r\ndate: {DATE}\r\n\r\nextra"),
            "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok".to_owned(),
        ];
        for answer in not {
            assert_eq!(hyper_refusal(answer.as_bytes()), None, "{answer}");
        }
        let listed = (0..1000).filter(|len| may_be_hyper_refusal(*len)).count();
        assert_eq!(listed, 5, "six answers, two of one length (the HTTP/1.1 414 and the HTTP/1.0 431)");
    }

    #[test]
    fn a_first_line_in_https_words_is_answered_and_any_other_is_not() {
        let status = |line: &[u8]| request_line_refusal(line).map(|(s, _)| s.as_u16());
        assert_eq!(status(b"GET / HTTP/2.0"), Some(505));
        assert_eq!(status(b"GET / HTTP/3"), Some(505));
        assert_eq!(status(b"GET / HTTP/01.1"), Some(400), "a version that is no version");
        assert_eq!(status(b"GET / HTTP/2.0x"), Some(400));
        assert_eq!(status(b"GET /health HTTP/1.1 "), Some(400), "a space after the version");
        assert_eq!(status(b"GET\t/\tHTTP/1.1"), Some(400), "tabs between the parts");
        assert_eq!(status(b"get / http/1.1"), Some(400));
        assert_eq!(status(b"GET /health HTTP/1.1\rHost: a\r"), Some(400), "a bare CR");
        assert_eq!(status(b"INVALID CONNECTION PREFACE"), None, "h2spec's broken preface");
        assert_eq!(status(b"GET /HTTP/x HTTP/2.0"), Some(505), "the version is the last HTTP/");
        // A TLS ClientHello's start (record, handshake and hello headers, random) and an ALPN
        // extension offering http/1.1, with no 0x0A before it.
        let mut hello = b"\x16\x03\x01\x00\xc0\x01\x00\x00\xbc\x03\x03".to_vec();
        hello.extend_from_slice(&[0x5a; 32]);
        hello.extend_from_slice(b"\x00\x00\x10\x00\x0e\x00\x0c\x02h2\x08http/1.1");
        assert_eq!(status(&hello), None, "a TLS hello");
        assert_eq!(status(b"GET /"), None, "HTTP/0.9 has no version to answer in");
    }

    #[test]
    fn a_closing_problem_is_one_whole_response() {
        let response = String::from_utf8(parse_problem(StatusCode::URI_TOO_LONG)).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 414 URI Too Long\r\ncontent-type: application/problem+json\r\nconnection: close\r\n"), "{head}");
        assert!(head.ends_with(&format!("content-length: {}", body.len())), "{head}");
        let date = head.lines().find_map(|line| line.strip_prefix("date: ")).expect("a date");
        assert!(httpdate::parse_http_date(date).is_ok(), "{date}");
        let problem: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(problem["status"], 414);
        assert_eq!(problem["title"], "URI Too Long");
    }
}
