//! JSON text written straight into a byte buffer: strings escaped and numbers printed exactly
//! as serde_json writes them, for the writers that walk a language's own objects (every
//! binding's `to_json`) and have no use for serde's calls per value, and behind serde's
//! interface for Rust's own values ([`to_vec`], in `serializer.rs`).
//!
//! Why not serde_json's `Serializer`: it looks up an escape table for every byte of every
//! string and goes through `io::Write` for every piece. This scans a string eight bytes at a
//! time for the three bytes that need an escape ([`plain_run`], the same test the JSON scan
//! uses to find a string's end) and copies each plain run in one piece. Response strings are
//! short (json-large's average 10 bytes), so that alone was worth little: on json-large's
//! response the Python writer's escaping took 11% of its time through this against 15%
//! through serde_json. A string of up to 16 bytes is tested in a few fixed-size reads and
//! copied in one piece ([`short_and_plain`]; its note says why the copy is not fixed-size
//! too: that counted fewer instructions and took twice the time). What this module also buys is
//! one escaper for every writer (Python, Ruby and Node each had their own way), and writers
//! free to walk their objects as suits them (`bindings/python/src/convert/to_json.rs` gained
//! most by borrowing what it reads).
//!
//! The output is byte for byte serde_json's: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, any
//! other control character as `\u00xx` (lower-case hex), everything else (DEL, non-ASCII) as
//! it is; integers in decimal; a float as serde_json prints it (`zmij`, shortest round trip).
//! The tests below hold the two to that.

mod serializer;

pub use serializer::{to_vec, Error};

/// Where the plain run of string text starting at `from` ends: at the first `"`, `\` or
/// control character (below 0x20), or at the end of `bytes`. Eight bytes at a time
/// ([`flagged`]); the lowest flagged byte is always a real match.
#[inline]
pub fn plain_run(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let flagged = flagged(u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])));
        if flagged != 0 {
            return at + (flagged.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&byte) = bytes.get(at) {
        if needs_escape(byte) {
            break;
        }
        at += 1;
    }
    at
}

/// The high bit of each byte of `word` that may need an escape: a byte is flagged when `b - k`
/// borrows for `b ^ '"'`, `b ^ '\\'` or `b` itself against 0x20. Zero exactly when no byte needs
/// one; otherwise the lowest flagged byte is a real match (borrows only run upwards, so a
/// higher one may be its echo).
#[inline]
fn flagged(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let quote = word ^ (ONES * b'"' as u64);
    let backslash = word ^ (ONES * b'\\' as u64);
    (quote.wrapping_sub(ONES) & !quote | backslash.wrapping_sub(ONES) & !backslash | word.wrapping_sub(ONES * 0x20) & !word) & HIGHS
}

/// Whether `byte` must be escaped inside a JSON string.
#[inline]
pub fn needs_escape(byte: u8) -> bool {
    byte == b'"' || byte == b'\\' || byte < 0x20
}

/// Writes `text` as a quoted, escaped JSON string.
#[inline]
pub fn string(out: &mut Vec<u8>, text: &str) {
    string_of_utf8(out, text.as_bytes());
}

/// [`string`] for text its caller already knows is UTF-8 (ASCII read from a JavaScript string,
/// say) without asking for a `&str`. Only ASCII bytes are ever escaped, so any other bytes pass
/// through as they are.
#[inline]
pub fn string_of_utf8(out: &mut Vec<u8>, text: &[u8]) {
    if short_and_plain(text) {
        out.reserve(text.len() + 2);
        out.push(b'"');
        out.extend_from_slice(text);
        out.push(b'"');
        return;
    }
    string_with_escapes(out, text);
}

/// Strings up to this long are tested for escapes in a few fixed-size reads.
const SHORT: usize = 16;

/// Whether `text` is at most [`SHORT`] bytes and needs no escape, read in fixed-size pieces
/// that together cover it (two overlapping words, two overlapping halves, or its first, middle
/// and last bytes, which are every byte of a text of three or fewer).
///
/// Most strings an answer holds are keys and short values (json-large's average 10 bytes), and
/// for them the general path's costs are fixed ones: a byte-at-a-time tail under eight bytes
/// and three capacity checks. The text itself is then copied with one `extend_from_slice`.
///
/// Time, not instructions, decided how. The 1,177 strings of json-large's body written one
/// after another, 20,000 times on one pinned core (release build; ranges over two runs of five
/// rounds): this test and one copy, 5.2–5.4 µs; the general path alone, 7.2–8.1 µs; a
/// byte-by-byte table loop as serde_json's, 8.7–9.5 µs. The version before this one copied the
/// text into a quoted stack array in the same overlapping pieces and appended the array whole:
/// fewest instructions of all (callgrind counted a whole response 15% below the general path),
/// yet 11.3–12.2 µs. The append reads back bytes just stored in pieces of other sizes and
/// offsets, which a processor cannot forward from its store buffer, so it waits for each
/// store to land.
#[inline(always)]
fn short_and_plain(text: &[u8]) -> bool {
    let len = text.len();
    let flags = match len {
        8..=SHORT => flagged(word(&text[..8])) | flagged(word(&text[len - 8..])),
        4..=7 => flagged(u64::from(half(&text[..4])) | u64::from(half(&text[len - 4..])) << 32),
        // The other five lanes hold spaces, which need no escape.
        1..=3 => flagged(u64::from_le_bytes([text[0], text[len / 2], text[len - 1], b' ', b' ', b' ', b' ', b' '])),
        0 => 0,
        _ => return false,
    };
    flags == 0
}

#[inline]
fn word(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]))
}

#[inline]
fn half(bytes: &[u8]) -> u32 {
    u32::from_le_bytes(bytes.try_into().unwrap_or([0; 4]))
}

/// [`string_of_utf8`] for any text: plain runs copied whole, each byte that needs it escaped.
fn string_with_escapes(out: &mut Vec<u8>, text: &[u8]) {
    out.reserve(text.len() + 2);
    out.push(b'"');
    string_contents(out, text);
    out.push(b'"');
}

/// A string's text escaped, without its quotes: for text that arrives in pieces (a value's
/// `Display`, written as it is formatted).
pub fn string_contents(out: &mut Vec<u8>, text: &[u8]) {
    let mut start = 0;
    loop {
        let end = plain_run(text, start);
        out.extend_from_slice(&text[start..end]);
        let Some(&byte) = text.get(end) else { break };
        escape(byte, out);
        start = end + 1;
    }
}

/// Writes the escape of one byte that [`needs_escape`].
pub fn escape(byte: u8, out: &mut Vec<u8>) {
    let short = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        0x08 => b'b',
        0x0c => b'f',
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

/// Writes an integer.
#[inline]
pub fn int(out: &mut Vec<u8>, value: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// Writes an integer of up to 128 bits (Python's and Ruby's integers are unbounded).
pub fn int128(out: &mut Vec<u8>, value: i128) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// Writes a finite float as serde_json does (`1.0`, `0.1`, `1e100`). A non-finite float has no
/// JSON text: each language decides (an error in Python and Ruby, `null` in JavaScript), so
/// this one is only ever handed finite ones.
#[inline]
pub fn float(out: &mut Vec<u8>, value: f64) {
    debug_assert!(value.is_finite(), "{value} has no JSON text");
    out.extend_from_slice(zmij::Buffer::new().format_finite(value).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(text: &str) -> String {
        let mut out = Vec::new();
        string(&mut out, text);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut cases: Vec<String> = vec![
            String::new(),
            "plain".into(),
            "exactly8".into(),
            "a \"quoted\" word, a back\\slash".into(),
            "\n\r\t\u{8}\u{c}\u{0}\u{1f}\u{7f}".into(),
            "é, 日本, 🎉 and \u{2028}".into(),
            "ends with a quote\"".into(),
            "\"starts with one".into(),
            "é".into(),
            "日本".into(),
            "🎉".into(),
            "aé\"".into(),
            "é\n日".into(),
        ];
        // Every byte below 0x80 at every offset of strings of 1 to 18 bytes, so that each lands
        // in every lane of the short strings' words, halves and bytes, and in both the
        // eight-byte scan and the byte-at-a-time tail of the longer ones. Among fillers of
        // different bits, as a byte can hide behind one: a short path that or-ed its two words
        // before testing them wrote a NUL next to `x`s unescaped, and failed here.
        for filler in [b'x', b' ', b'~', b'A'] {
            for len in 1..=18 {
                for byte in 0u8..0x80 {
                    for at in 0..len {
                        let mut text = vec![filler; len];
                        text[at] = byte;
                        if let Ok(text) = String::from_utf8(text) {
                            cases.push(text);
                        }
                    }
                }
            }
        }
        for text in cases {
            assert_eq!(written(&text), serde_json::to_string(&text).unwrap(), "{text:?}");
        }
        // Appended after what the buffer holds, and nothing written past the string's end.
        let mut out = b"[1,".to_vec();
        string(&mut out, "abcde");
        out.push(b']');
        assert_eq!(out, b"[1,\"abcde\"]");
    }

    #[test]
    fn the_plain_run_ends_at_the_first_byte_to_escape() {
        // A borrow from a real match must not hide it, nor flag an earlier byte.
        assert_eq!(plain_run(b"ab\x1f\"cdefghij", 0), 2);
        assert_eq!(plain_run(b"abcdefg\\hijklmn", 0), 7);
        assert_eq!(plain_run(b"\x21\x22\x23abcdefgh", 0), 1);
        assert_eq!(plain_run("ééééé\"".as_bytes(), 0), 10);
        assert_eq!(plain_run(b"no escape at all, long enough", 3), 29);
    }

    #[test]
    fn numbers_are_printed_as_serde_json_prints_them() {
        for value in [0i64, -1, 7, i64::MAX, i64::MIN, 1_000_000] {
            let mut out = Vec::new();
            int(&mut out, value);
            assert_eq!(out, serde_json::to_vec(&value).unwrap());
        }
        for value in [i128::MAX, i128::MIN, -5] {
            let mut out = Vec::new();
            int128(&mut out, value);
            assert_eq!(out, serde_json::to_vec(&value).unwrap());
        }
        for value in [0.0, -0.0, 1.0, 0.1, -2.5, 1e100, 1e-7, 123456789.125, f64::MAX, f64::MIN_POSITIVE, 5e-324] {
            let mut out = Vec::new();
            float(&mut out, value);
            assert_eq!(out, serde_json::to_vec(&value).unwrap(), "{value}");
        }
    }
}
