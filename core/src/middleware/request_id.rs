//! `x-request-id`: every request has one (the client's, or a new random one), its handler
//! sees it in the request's headers, and its response carries it back.
//!
//! One plain tower layer where tower-http needs two (`SetRequestId`, `PropagateRequestId`),
//! and it does not copy the ID into the request's and the response's extensions as those two
//! do: nothing here reads it from there. Those copies (an allocation and a table growth for each
//! map) and the second layer were 1,830 of a json-small request's 37,440 instructions
//! (callgrind, 3,000 requests: 37,437 before, 35,611 after); plain axum's whole request is
//! 34,241.
//!
//! New IDs are random (version 4) UUIDs whose bytes come from the operating system in
//! blocks, so a request costs no system call. tower-http's `MakeRequestUuid` asks the kernel
//! for 16 bytes on every request; that `getrandom` call was about 1 µs of a ~35 µs request.
//! The bytes are the kernel's own, so the IDs stay unpredictable. Blocks belong to the
//! runtime's threads, which a forked worker process does not inherit (the bindings fork
//! before starting a runtime), so no two processes hand out the same block.

use http::header::Entry;
use http::{HeaderValue, Request, Response};
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tower::{Layer, Service};

/// The header the ID travels in; a name made at compile time, as a `&str` key would be parsed
/// and checked on every lookup.
pub(crate) const X_REQUEST_ID: http::HeaderName = http::HeaderName::from_static("x-request-id");

/// The ID in `headers` (a request's, as the layer set or kept it; a response's), if it is text.
pub(crate) fn request_id_in(headers: &http::HeaderMap) -> Option<&str> {
    headers.get(X_REQUEST_ID).and_then(|v| v.to_str().ok())
}

#[derive(Clone, Copy, Default)]
pub(crate) struct RequestIdLayer;

impl<S> Layer<S> for RequestIdLayer {
    type Service = RequestIds<S>;

    fn layer(&self, inner: S) -> RequestIds<S> {
        RequestIds { inner }
    }
}

#[derive(Clone)]
pub(crate) struct RequestIds<S> {
    inner: S,
}

impl<S, B, R> Service<Request<B>> for RequestIds<S>
where
    S: Service<Request<B>, Response = Response<R>>,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = AnsweredWithId<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        // The client's own ID is kept as it came, whatever its form, as tower-http keeps it,
        // when it is text: one with other bytes (`été` in UTF-8) is replaced, as the handler
        // and the log could not read it and would see no ID while the client saw one.
        // One lookup of the name, not one to read and another to write (`entry`).
        let id = match request.headers_mut().entry(X_REQUEST_ID) {
            Entry::Occupied(kept) if kept.get().to_str().is_ok() => Some(kept.get().clone()),
            Entry::Occupied(mut unreadable) => new_id().inspect(|id| {
                unreadable.insert(id.clone());
            }),
            Entry::Vacant(vacant) => new_id().map(|id| vacant.insert(id).clone()),
        };
        AnsweredWithId { inner: self.inner.call(request), id }
    }
}

pin_project_lite::pin_project! {
    /// The inner response, given the request's ID unless its handler set one of its own.
    pub(crate) struct AnsweredWithId<F> {
        #[pin]
        inner: F,
        id: Option<HeaderValue>,
    }
}

impl<F, R, E> Future for AnsweredWithId<F>
where
    F: Future<Output = Result<Response<R>, E>>,
{
    type Output = Result<Response<R>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut response = ready!(this.inner.poll(cx))?;
        if let Some(mut id) = this.id.take() {
            if let Entry::Vacant(vacant) = response.headers_mut().entry(X_REQUEST_ID) {
                // Never indexed by HTTP/2's header compression: an ID is unique, so a table entry
                // for it is never used again, evicts ones that would be, and would keep the ID's
                // bytes (a text shared with 31 other IDs, or the client's request) for as long
                // as the connection.
                id.set_sensitive(true);
                vacant.insert(id);
            }
        }
        Poll::Ready(Ok(response))
    }
}

/// A new random ID; `None` only if the kernel refuses randomness, in which case the request
/// goes without one.
///
/// IDs are written [`IDS_PER_TEXT`] at a time into one shared text, and each is a slice of it.
/// Why: an ID of its own was a 36-byte allocation, and a second one when it was cloned into the
/// response (a `Bytes` made from a copy is promoted to a shared one on its first clone), each
/// freed again. A slice and its clone are counter increments. With the formatting below and
/// one draw of random bytes per text, a json-small request's path took about 330 fewer
/// instructions (callgrind, 1,000 requests; `new_id` with what it calls 307 → 160). Cost: a request kept alive keeps its text's 1,152
/// bytes, not 36 (a WebSocket session copies its request's header values, and the response's
/// ID is never indexed by HTTP/2, see [`AnsweredWithId`]).
fn new_id() -> Option<HeaderValue> {
    TEXT.with_borrow_mut(|ids| {
        if ids.next + ID_LENGTH > ids.text.len() {
            ids.text = write_ids()?;
            ids.next = 0;
        }
        let id = ids.text.slice(ids.next..ids.next + ID_LENGTH);
        ids.next += ID_LENGTH;
        // SAFETY: the text is hyphenated UUIDs (hex digits and `-`), so it is UTF-8, and every
        // byte is one a header value may hold.
        Some(unsafe { HeaderValue::from_maybe_shared_unchecked(id) })
    })
}

const ID_LENGTH: usize = uuid::fmt::Hyphenated::LENGTH;

/// IDs written at once: one allocation for 32 requests, and a kept request holds 1,152 bytes.
const IDS_PER_TEXT: usize = 32;

/// The IDs not handed out yet: `text[next..]`.
struct IdText {
    text: bytes::Bytes,
    next: usize,
}

fn write_ids() -> Option<bytes::Bytes> {
    let random = random_for_a_text()?;
    let mut text = vec![0u8; IDS_PER_TEXT * ID_LENGTH];
    for (id, random) in text.chunks_exact_mut(ID_LENGTH).zip(random.chunks_exact(16)) {
        write_id(random.try_into().expect("16 bytes"), id.try_into().expect("ID_LENGTH bytes"));
    }
    Some(bytes::Bytes::from(text))
}

/// Writes a version 4 UUID made of `random` in its hyphenated lower-case form, a table lookup
/// per byte and fixed ranges (cheaper than `uuid`'s formatter; see [`new_id`]'s figures).
fn write_id(mut random: [u8; 16], out: &mut [u8; ID_LENGTH]) {
    // RFC 9562 §5.4: version 4 in the high nibble of byte 6, variant `10` in byte 8's top bits.
    random[6] = (random[6] & 0x0f) | 0x40;
    random[8] = (random[8] & 0x3f) | 0x80;
    let mut hex = [0u8; 32];
    for (pair, byte) in hex.chunks_exact_mut(2).zip(random) {
        pair.copy_from_slice(&HEX_PAIRS[usize::from(byte)]);
    }
    // Fixed ranges, so the copies need no checks: 8-4-4-4-12 digits.
    out[..8].copy_from_slice(&hex[..8]);
    out[9..13].copy_from_slice(&hex[8..12]);
    out[14..18].copy_from_slice(&hex[12..16]);
    out[19..23].copy_from_slice(&hex[16..20]);
    out[24..].copy_from_slice(&hex[20..]);
    for at in [8, 13, 18, 23] {
        out[at] = b'-';
    }
}

/// Each byte's two lower-case hex digits.
const HEX_PAIRS: [[u8; 2]; 256] = {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut pairs = [[0u8; 2]; 256];
    let mut byte = 0;
    while byte < 256 {
        pairs[byte] = [DIGITS[byte >> 4], DIGITS[byte & 0x0f]];
        byte += 1;
    }
    pairs
};

/// 256 IDs' worth of random bytes per system call.
const BLOCK: usize = 4096;

struct RandomBlock {
    bytes: [u8; BLOCK],
    next: usize,
}

thread_local! {
    // Boxed: the bindings are loaded with dlopen, where thread-local storage is scarce (a
    // 4 KiB block inline makes `dlopen` fail with "cannot allocate memory in static TLS block").
    static RANDOM: RefCell<Option<Box<RandomBlock>>> = const { RefCell::new(None) };
    static TEXT: RefCell<IdText> = const { RefCell::new(IdText { text: bytes::Bytes::new(), next: 0 }) };
}

/// The random bytes of one text's IDs, which no other call gets (each is handed out once, then
/// zeroed); `None` only if the kernel refuses randomness, in which case the request goes
/// without an ID.
fn random_for_a_text() -> Option<[u8; RANDOM_PER_TEXT]> {
    RANDOM.with_borrow_mut(|slot| {
        let block = slot.get_or_insert_with(|| Box::new(RandomBlock { bytes: [0; BLOCK], next: BLOCK }));
        if block.next + RANDOM_PER_TEXT > BLOCK {
            fill_from_kernel(&mut block.bytes)?;
            block.next = 0;
        }
        let range = block.next..block.next + RANDOM_PER_TEXT;
        block.next += RANDOM_PER_TEXT;
        let out: [u8; RANDOM_PER_TEXT] = block.bytes[range.clone()].try_into().ok()?;
        block.bytes[range].fill(0);
        Some(out)
    })
}

const RANDOM_PER_TEXT: usize = IDS_PER_TEXT * 16;
const _: () = assert!(BLOCK % RANDOM_PER_TEXT == 0, "a block holds whole texts' worth");

fn fill_from_kernel(bytes: &mut [u8]) -> Option<()> {
    let mut filled = 0;
    while filled < bytes.len() {
        let rest = &mut bytes[filled..];
        // SAFETY: writes at most `rest.len()` bytes into `rest`, which we own.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return None;
        }
        filled += n as usize;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn id() -> String {
        new_id().expect("an id").to_str().unwrap().to_owned()
    }

    #[test]
    fn ids_are_distinct_v4_uuids_across_block_refills() {
        let ids: Vec<String> = (0..3 * BLOCK / 16 + 7).map(|_| id()).collect();
        for id in &ids {
            let uuid = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(uuid.get_version_num(), 4, "{id}");
            assert_eq!(uuid.get_variant(), uuid::Variant::RFC4122, "{id}");
            assert_eq!(id, &uuid.hyphenated().to_string(), "canonical lower-case form");
        }
        assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len());
    }

    /// Serves one request through the layer: the ID the handler saw, and the response's.
    async fn through_layer(client_id: Option<&'static str>, handler_id: Option<&'static str>) -> (Option<String>, Option<String>) {
        use tower::ServiceExt;
        let handler = tower::service_fn(move |request: Request<()>| async move {
            let seen = request_id_in(request.headers()).map(str::to_owned);
            let mut response = Response::new(seen.clone());
            if let Some(own) = handler_id {
                response.headers_mut().insert(X_REQUEST_ID, HeaderValue::from_static(own));
            }
            Ok::<_, std::convert::Infallible>(response)
        });
        let mut request = Request::new(());
        if let Some(id) = client_id {
            request.headers_mut().insert(X_REQUEST_ID, HeaderValue::from_static(id));
        }
        let response = RequestIdLayer.layer(handler).oneshot(request).await.unwrap();
        (response.body().clone(), request_id_in(response.headers()).map(str::to_owned))
    }

    #[tokio::test]
    async fn a_new_id_reaches_the_handler_and_the_response() {
        let (seen, answered) = through_layer(None, None).await;
        let seen = seen.expect("the handler sees an id");
        assert!(uuid::Uuid::parse_str(&seen).is_ok(), "{seen}");
        assert_eq!(answered.as_deref(), Some(seen.as_str()));
    }

    // An HTTP/2 connection's header table kept every response's ID, and with it the text of 32
    // IDs it is a slice of: 50 entries, up to 57 KB a connection.
    #[tokio::test]
    async fn the_responses_id_is_never_indexed_by_header_compression() {
        use tower::ServiceExt;
        let handler = tower::service_fn(|_: Request<()>| async { Ok::<_, std::convert::Infallible>(Response::new(())) });
        let response = RequestIdLayer.layer(handler).oneshot(Request::new(())).await.unwrap();
        assert!(response.headers()[X_REQUEST_ID].is_sensitive());
    }

    #[tokio::test]
    async fn the_clients_id_is_kept_whatever_its_form() {
        let (seen, answered) = through_layer(Some("trace 7/a"), None).await;
        assert_eq!((seen.as_deref(), answered.as_deref()), (Some("trace 7/a"), Some("trace 7/a")));
    }

    // Found by a core-HTTP probe: `été` was echoed to the client while the handler saw none.
    #[tokio::test]
    async fn a_client_id_that_is_not_text_is_replaced_for_everyone() {
        use tower::ServiceExt;
        let handler = tower::service_fn(|request: Request<()>| async move { Ok::<_, std::convert::Infallible>(Response::new(request_id_in(request.headers()).map(str::to_owned))) });
        let mut request = Request::new(());
        request.headers_mut().insert(X_REQUEST_ID, HeaderValue::from_bytes("été".as_bytes()).unwrap());
        let response = RequestIdLayer.layer(handler).oneshot(request).await.unwrap();
        let seen = response.body().clone().expect("the handler sees an id");
        assert!(uuid::Uuid::parse_str(&seen).is_ok(), "{seen}");
        assert_eq!(request_id_in(response.headers()).as_deref(), Some(seen.as_str()));
    }

    #[tokio::test]
    async fn a_handlers_own_id_wins_on_its_response() {
        let (seen, answered) = through_layer(Some("from-client"), Some("from-handler")).await;
        assert_eq!((seen.as_deref(), answered.as_deref()), (Some("from-client"), Some("from-handler")));
    }

    #[test]
    fn an_id_is_written_as_the_uuid_crate_writes_it() {
        for random in [[0u8; 16], [0xff; 16], std::array::from_fn(|i| i as u8 * 17), std::array::from_fn(|i| 0xf0 ^ i as u8)] {
            let mut out = [0u8; ID_LENGTH];
            write_id(random, &mut out);
            let expected = uuid::Builder::from_random_bytes(random).into_uuid().hyphenated().to_string();
            assert_eq!(std::str::from_utf8(&out).unwrap(), expected);
        }
    }

    // The cost model of `new_id`: consecutive IDs are neighbours in one text, not allocations
    // of their own; 64 IDs cross at most two texts.
    #[test]
    fn ids_are_slices_of_texts_written_32_at_a_time() {
        let ids: Vec<HeaderValue> = (0..2 * IDS_PER_TEXT).map(|_| new_id().expect("an id")).collect();
        let neighbours = ids.windows(2).filter(|pair| pair[0].as_bytes().as_ptr().wrapping_add(ID_LENGTH) == pair[1].as_bytes().as_ptr()).count();
        assert!(neighbours >= ids.len() - 1 - 2, "{neighbours} of {} pairs are neighbours", ids.len() - 1);
    }

    #[test]
    fn threads_draw_different_bytes() {
        let a = std::thread::spawn(id).join().unwrap();
        let b = std::thread::spawn(id).join().unwrap();
        assert_ne!(a, b);
    }
}
