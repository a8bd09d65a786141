//! The byte format of a fuzz input: a request written much as HTTP/1.1 writes it, so that
//! libFuzzer's mutations (byte flips, splices, inserted dictionary words) stay requests.
//!
//! ```text
//! byte 0          which of the target's apps serves it (modulo their number)
//! METHOD target   then "\n"
//! name: value     zero or more header lines, each ending in "\n" ("\r\n" is accepted)
//!                 an empty line
//! body            every remaining byte
//! ```
//!
//! An input the `http` crate refuses (a method, URI or header hyper would not have parsed
//! either) never reaches the router: it is not a request the core can receive.

use bytes::Bytes;

/// A decoded input: the app index and the request, with `Content-Length` set from the body as
/// hyper sets it for a received request (whatever length the input claims is dropped).
pub fn decode(data: &[u8]) -> Option<(usize, http::Request<Bytes>)> {
    let (&app, rest) = data.split_first()?;
    let mut lines = Lines { rest };
    let start = lines.next()?;
    let space = start.iter().position(|&b| b == b' ')?;
    let method = http::Method::from_bytes(&start[..space]).ok()?;
    let uri = http::Uri::try_from(&start[space + 1..]).ok()?;
    // An origin-form target, as a server receives it.
    uri.path_and_query()?;
    if uri.scheme().is_some() {
        return None;
    }
    let mut builder = http::Request::builder().method(method).uri(uri);
    loop {
        let line = lines.next()?;
        if line.is_empty() {
            break;
        }
        let colon = line.iter().position(|&b| b == b':')?;
        let name = http::HeaderName::from_bytes(&line[..colon]).ok()?;
        let value = http::HeaderValue::from_bytes(line[colon + 1..].trim_ascii()).ok()?;
        if name == http::header::CONTENT_LENGTH || name == http::header::TRANSFER_ENCODING {
            continue;
        }
        builder = builder.header(name, value);
    }
    let body = Bytes::copy_from_slice(lines.rest);
    if !body.is_empty() {
        builder = builder.header(http::header::CONTENT_LENGTH, body.len());
    }
    Some((app as usize, builder.body(body).ok()?))
}

/// The input for `request` served by app `app` (seeds are written with it).
pub fn encode(app: u8, request: &http::Request<Vec<u8>>) -> Vec<u8> {
    let mut out = vec![app];
    out.extend_from_slice(request.method().as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(request.uri().to_string().as_bytes());
    out.push(b'\n');
    for (name, value) in request.headers() {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.push(b'\n');
    }
    out.push(b'\n');
    out.extend_from_slice(request.body());
    out
}

struct Lines<'a> {
    rest: &'a [u8],
}

impl<'a> Lines<'a> {
    fn next(&mut self) -> Option<&'a [u8]> {
        let end = self.rest.iter().position(|&b| b == b'\n')?;
        let line = &self.rest[..end];
        self.rest = &self.rest[end + 1..];
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_survives_encoding() {
        let request = http::Request::post("/items/7?q=a%20b")
            .header("content-type", "application/json")
            .header("cookie", "a=1; b=2")
            .body(b"{\"x\": [1, 2]}\n".to_vec())
            .unwrap();
        let (app, decoded) = decode(&encode(3, &request)).unwrap();
        assert_eq!(app, 3);
        assert_eq!(decoded.method(), "POST");
        assert_eq!(decoded.uri(), "/items/7?q=a%20b");
        assert_eq!(decoded.headers()["cookie"], "a=1; b=2");
        assert_eq!(decoded.headers()["content-length"], "14");
        assert_eq!(decoded.body().as_ref(), b"{\"x\": [1, 2]}\n");
    }

    #[test]
    fn what_hyper_would_refuse_is_not_an_input() {
        assert!(decode(b"").is_none());
        assert!(decode(b"\x00GET /\n").is_none(), "no end of head");
        assert!(decode(b"\x00G T /\n\n").is_none(), "bad method");
        assert!(decode(b"\x00GET http://x/\n\n").is_none(), "absolute-form");
        assert!(decode(b"\x00GET /\nbad header\n\n").is_none(), "header without colon");
    }

    #[test]
    fn a_claimed_length_is_replaced_by_the_real_one() {
        let (_, request) = decode(b"\x00POST /\ncontent-length: 99\ntransfer-encoding: chunked\n\nabc").unwrap();
        assert_eq!(request.headers()["content-length"], "3");
        assert!(request.headers().get("transfer-encoding").is_none());
    }
}
