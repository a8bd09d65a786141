//! W3C Trace Context: the `traceparent` header a caller sends (`00-<trace id>-<parent id>-
//! <flags>`), read once by the core into the request's context, so a handler in any language can
//! log the trace id and send the trace on to the services it calls, and the access log line
//! carries the trace id. Parsed only when the header is there: a request without one pays a
//! header lookup.
//!
//! The rules are the specification's (§3.2): lower-case hex, ids not all zero, version `ff`
//! invalid, a version above `00` read by its first four fields when followed by `-` or nothing.
//! An invalid header is ignored, as the specification asks (a new trace begins downstream).

/// The caller's trace, as `traceparent` carried it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceContext {
    pub trace_id: [u8; 16],
    /// The caller's span: this request's parent.
    pub parent_id: [u8; 8],
    pub flags: u8,
}

impl TraceContext {
    /// The context of a `traceparent` value, or `None` for one the specification says to ignore.
    pub fn parse(value: &[u8]) -> Option<TraceContext> {
        if value.len() < 55 || value[2] != b'-' || value[35] != b'-' || value[52] != b'-' {
            return None;
        }
        let version = hex_byte(&value[0..2])?;
        if version == 0xff || (version == 0 && value.len() != 55) || (version > 0 && value.len() > 55 && value[55] != b'-') {
            return None;
        }
        let mut trace_id = [0u8; 16];
        for (i, byte) in trace_id.iter_mut().enumerate() {
            *byte = hex_byte(&value[3 + 2 * i..5 + 2 * i])?;
        }
        let mut parent_id = [0u8; 8];
        for (i, byte) in parent_id.iter_mut().enumerate() {
            *byte = hex_byte(&value[36 + 2 * i..38 + 2 * i])?;
        }
        let flags = hex_byte(&value[53..55])?;
        if trace_id == [0; 16] || parent_id == [0; 8] {
            return None;
        }
        Some(TraceContext { trace_id, parent_id, flags })
    }

    /// The request's context: its `traceparent` header, if it has a valid one.
    pub fn of(headers: &http::HeaderMap) -> Option<TraceContext> {
        // A name made at compile time: a `&str` would be parsed and checked on every lookup.
        const TRACEPARENT: http::HeaderName = http::HeaderName::from_static("traceparent");
        headers.get(TRACEPARENT).and_then(|value| TraceContext::parse(value.as_bytes()))
    }

    pub fn trace_id_hex(&self) -> String {
        hex(&self.trace_id)
    }

    pub fn parent_id_hex(&self) -> String {
        hex(&self.parent_id)
    }

    /// Whether the caller sampled (records) this trace.
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }

    /// The `traceparent` as received (version 00 form).
    pub fn header(&self) -> String {
        format!("00-{}-{}-{:02x}", hex(&self.trace_id), hex(&self.parent_id), self.flags)
    }
}

/// One lower-case hex byte (the specification refuses upper case).
fn hex_byte(pair: &[u8]) -> Option<u8> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    Some(digit(pair[0])? << 4 | digit(pair[1])?)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn the_specifications_example_is_read() {
        let trace = TraceContext::parse(VALID.as_bytes()).unwrap();
        assert_eq!(trace.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(trace.parent_id_hex(), "00f067aa0ba902b7");
        assert!(trace.sampled());
        assert_eq!(trace.header(), VALID);
    }

    #[test]
    fn what_the_specification_says_to_ignore_is_ignored() {
        for invalid in [
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "not a trace",
        ] {
            assert_eq!(TraceContext::parse(invalid.as_bytes()), None, "{invalid}");
        }
    }

    #[test]
    fn a_later_version_is_read_by_its_first_fields() {
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what-comes-next";
        let trace = TraceContext::parse(later.as_bytes()).unwrap();
        assert!(!trace.sampled());
        assert_eq!(trace.header(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
    }
}
