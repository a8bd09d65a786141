//! `x-request-id` values: random (version 4) UUIDs whose bytes come from the operating system
//! in blocks, so a request costs no system call. tower-http's `MakeRequestUuid` asks the
//! kernel for 16 bytes on every request; that `getrandom` call was about 1 µs of a ~35 µs
//! request. The bytes are the kernel's own, so the IDs stay unpredictable. Blocks belong to
//! the runtime's threads, which a forked worker process does not inherit (the bindings fork
//! before starting a runtime), so no two processes hand out the same block.

use http::{HeaderValue, Request};
use std::cell::RefCell;
use tower_http::request_id::{MakeRequestId, RequestId};

/// The header the ID travels in; a name made at compile time, as a `&str` key would be parsed
/// and checked on every lookup.
pub(crate) const X_REQUEST_ID: http::HeaderName = http::HeaderName::from_static("x-request-id");

/// The ID in `headers` (a request's, as the layer set or kept it; a response's), if it is text.
pub(crate) fn request_id_in(headers: &http::HeaderMap) -> Option<String> {
    headers.get(X_REQUEST_ID).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

#[derive(Clone, Copy, Default)]
pub(crate) struct MakeRandomUuid;

impl MakeRequestId for MakeRandomUuid {
    fn make_request_id<B>(&mut self, _request: &Request<B>) -> Option<RequestId> {
        let uuid = uuid::Builder::from_random_bytes(random_16()?).into_uuid();
        let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
        HeaderValue::from_str(uuid.hyphenated().encode_lower(&mut text)).ok().map(RequestId::new)
    }
}

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
}

/// 16 bytes no other call gets (each is handed out once, then zeroed); `None` only if the
/// kernel refuses randomness, in which case the request goes without an ID.
fn random_16() -> Option<[u8; 16]> {
    RANDOM.with_borrow_mut(|slot| {
        let block = slot.get_or_insert_with(|| Box::new(RandomBlock { bytes: [0; BLOCK], next: BLOCK }));
        if block.next + 16 > BLOCK {
            fill_from_kernel(&mut block.bytes)?;
            block.next = 0;
        }
        let range = block.next..block.next + 16;
        block.next += 16;
        let out: [u8; 16] = block.bytes[range.clone()].try_into().ok()?;
        block.bytes[range].fill(0);
        Some(out)
    })
}

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
        let request = Request::new(());
        let value = MakeRandomUuid.make_request_id(&request).expect("an id");
        value.header_value().to_str().unwrap().to_owned()
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

    #[test]
    fn threads_draw_different_bytes() {
        let a = std::thread::spawn(id).join().unwrap();
        let b = std::thread::spawn(id).join().unwrap();
        assert_ne!(a, b);
    }
}
