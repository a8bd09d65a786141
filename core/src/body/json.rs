//! JSON bodies, with malformed input located the way FastAPI locates it: `["body", offset]`.

use crate::problem::{Issue, LocSegment};
use serde_json::{json, Value as Json};

pub fn parse(bytes: &[u8]) -> Result<Json, Issue> {
    // One UTF-8 check of the whole body is cheaper than serde_json's check of every string
    // from bytes; a body that fails it is parsed from bytes to locate the problem.
    let parsed = match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(bytes),
    };
    parsed.map_err(|error| {
        let message = error.to_string();
        // serde_json appends " at line L column C"; the offset says the same more precisely.
        let reason = message.split(" at line ").next().unwrap_or(&message).to_owned();
        let offset = if error.is_eof() {
            // Input ended early: the error is at the end, where the next value was expected.
            bytes.len()
        } else {
            let mut offset = byte_offset(bytes, error.line(), error.column());
            if reason == "expected ident" {
                // A bad literal (`tea`, `nul!`): serde_json points at the first wrong letter,
                // Python's json module (so FastAPI) at the start of the value.
                while offset > 0 && bytes[offset - 1].is_ascii_alphabetic() {
                    offset -= 1;
                }
            }
            offset
        };
        Issue::new(
            "json_invalid",
            vec![LocSegment::Key("body".into()), LocSegment::Index(offset)],
            "JSON decode error",
            json!({}),
        )
        .with_ctx(json!({"error": reason}))
    })
}

/// serde_json reports 1-based line and column; turn them into a 0-based byte offset.
fn byte_offset(bytes: &[u8], line: usize, column: usize) -> usize {
    let line_start: usize = bytes
        .split(|b| *b == b'\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    (line_start + column.saturating_sub(1)).min(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(input: &str) -> serde_json::Value {
        serde_json::to_value(parse(input.as_bytes()).unwrap_err().loc).unwrap()
    }

    #[test]
    fn malformed_json_is_located() {
        assert_eq!(loc("{\"a\": }"), json!(["body", 6]));
        assert_eq!(loc("{\n  \"a\": 1,\n  x\n}"), json!(["body", 14]));
    }

    #[test]
    fn a_bad_literal_is_located_at_its_start() {
        assert_eq!(loc("{\"item\": tea}"), json!(["body", 9]));
        assert_eq!(loc("[1, nul!]"), json!(["body", 4]));
        assert_eq!(loc("[True]"), json!(["body", 1]));
    }

    #[test]
    fn invalid_utf8_is_located_in_the_string() {
        let mut bytes = b"{\"a\": \"ab".to_vec();
        bytes.extend_from_slice(&[0xff, b'"', b'}']);
        let issue = parse(&bytes).unwrap_err();
        assert_eq!(serde_json::to_value(issue.loc).unwrap(), json!(["body", 9]));
        assert!(parse("{\"a\": \"\u{e9}\"}".as_bytes()).is_ok());
    }

    #[test]
    fn truncated_json_points_at_the_end() {
        assert_eq!(loc("{\"a\": [1, 2"), json!(["body", 11]));
    }
}
