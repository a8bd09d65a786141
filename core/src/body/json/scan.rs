//! The fast path of [`super::parse`]: one pass over the text that writes the tape directly
//! and accepts only what it has checked completely. It gives up (`None`) on anything else —
//! malformed JSON, a repeated key, an integer beyond 64 bits, nesting past the limit, a lone
//! surrogate, a float beyond `f64` — and the strict serde_json parse runs from the start. That
//! parse stays the one judge of what is refused and where, so a refused body costs two parses
//! and an accepted one costs this pass alone. The two must agree on every body this pass
//! accepts: the tests below compare them on generated and mutated bodies, and the fuzz build
//! (`cfg(fuzzing)`) compares them on every JSON body it serves.
//!
//! Cost, json-large's 15 KB body parsed and freed on one core (the core's release build,
//! glibc's allocator): serde_json's visitor 23.6 µs, this pass 14.3 µs; json-medium 2.3 → 1.5
//! µs. Served with this and the reader change before it, Rust json-large went from 66 to 58
//! CPU-µs a request (the shipped build, interleaved A/B). Strings are scanned eight
//! bytes at a time for the three bytes that end a plain run (`"`, `\`, a control character).
//! The tape's text begins with a copy of the body ([`Builder::over`]), so a string without
//! escapes is recorded where it lies and only a decoded one is copied on its own (with the
//! scan of strings inlined, json-large's served request went from 979,565 to 902,273
//! instructions, −7.9%, and the server's user CPU by about 2%: 54.8 → 53.7 µs, pinned, three
//! runs of 40,000 requests each way). Numbers are read digit by digit, in one pass; a short
//! decimal is one exact operation ([`exact_float`]) and any other float goes through the
//! standard library's parser (correctly rounded, as serde_json's `float_roundtrip`).

use super::SeenKeys;
use crate::document::{Builder, Document, Span};

/// The tape of `text`, or `None` when the strict parse must decide.
pub(super) fn scan(text: &str, max_depth: usize) -> Option<Document> {
    let builder = Builder::over(text);
    let mut scanner = Scanner { text, bytes: text.as_bytes(), at: 0, builder, max_depth, unescaped: String::new() };
    scanner.skip_whitespace();
    scanner.value(0)?;
    scanner.skip_whitespace();
    (scanner.at == scanner.bytes.len()).then(|| scanner.builder.finish())
}

/// A float literal's exponent of more digits than this is left to the strict parse (no real
/// body has one; `f64` ends at 10^308).
const MAX_EXPONENT_DIGITS: usize = 4;

struct Scanner<'t> {
    text: &'t str,
    bytes: &'t [u8],
    at: usize,
    builder: Builder,
    max_depth: usize,
    /// A string with escapes, decoded (reused across strings).
    unescaped: String,
}

impl<'t> Scanner<'t> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    #[inline]
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// A value at `self.at`, written to the tape. Inlined into its callers, so a scalar is read
    /// in its container's loop and only an object or an array is a call of its own (they are
    /// kept out of line, which also ends the recursion). As a call for every value, each paid
    /// its register saves and restores: json-large's body parsed and freed went from 14.2–15.0
    /// to 12.6–12.8 µs, json-medium's from 1.40–1.53 to 1.34–1.36 µs (one pinned core, four
    /// interleaved runs of 40,000 parses each), for 3% fewer instructions (callgrind, 1,000
    /// parses each of json-small, json-medium and json-large: 336.3M → 326.3M).
    #[inline(always)]
    fn value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => {
                self.string()?;
                Some(())
            }
            b't' => self.literal(b"true").map(|()| self.builder.bool(true)),
            b'f' => self.literal(b"false").map(|()| self.builder.bool(false)),
            b'n' => self.literal(b"null").map(|()| self.builder.null()),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if self.bytes.get(self.at..self.at + word.len())? != word {
            return None;
        }
        self.at += word.len();
        Some(())
    }

    /// Containers at `depth` (the body itself is 0) exist only below the app's limit.
    #[inline(never)]
    fn array(&mut self, depth: usize) -> Option<()> {
        if depth >= self.max_depth {
            return None;
        }
        self.at += 1;
        let mut open = self.builder.open_array();
        self.skip_whitespace();
        if self.peek()? == b']' {
            self.at += 1;
            self.builder.close(open);
            return Some(());
        }
        loop {
            self.skip_whitespace();
            self.value(depth + 1)?;
            self.builder.counted(&mut open);
            self.skip_whitespace();
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    self.builder.close(open);
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    #[inline(never)]
    fn object(&mut self, depth: usize) -> Option<()> {
        if depth >= self.max_depth {
            return None;
        }
        self.at += 1;
        let mut open = self.builder.open_object();
        self.skip_whitespace();
        if self.peek()? == b'}' {
            self.at += 1;
            self.builder.close(open);
            return Some(());
        }
        let mut seen = SeenKeys::new();
        loop {
            self.skip_whitespace();
            if self.peek()? != b'"' {
                return None;
            }
            let span = self.string()?;
            self.builder.key(span);
            self.skip_whitespace();
            if self.peek()? != b':' {
                return None;
            }
            self.at += 1;
            self.skip_whitespace();
            self.value(depth + 1)?;
            if seen.repeats(&self.builder, open.len(), span) {
                return None;
            }
            self.builder.counted(&mut open);
            self.skip_whitespace();
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    self.builder.close(open);
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string (value or key) at `self.at`, written to the tape. Inlined into its two
    /// callers: as a call it saved and restored registers for every string, 21 of its 87
    /// instructions; json-large's request went from 929,610 to 902,273 (callgrind, served).
    #[inline(always)]
    fn string(&mut self) -> Option<Span> {
        self.at += 1;
        let start = self.at;
        let end = self.plain_run(start);
        match *self.bytes.get(end)? {
            b'"' => {
                self.at = end + 1;
                Some(self.builder.str_of_source(start, end - start))
            }
            b'\\' => self.escaped_string(start, end),
            _ => None, // a control character: the strict parse refuses it
        }
    }

    /// The rest of a string from its first escape at `escape`, decoded into `unescaped`.
    #[cold]
    #[inline(never)]
    fn escaped_string(&mut self, start: usize, mut escape: usize) -> Option<Span> {
        let mut unescaped = std::mem::take(&mut self.unescaped);
        unescaped.clear();
        unescaped.push_str(self.text(start, escape));
        loop {
            let decoded = self.escape(escape + 1)?;
            unescaped.push(decoded.0);
            let run = decoded.1;
            let end = self.plain_run(run);
            unescaped.push_str(self.text(run, end));
            match *self.bytes.get(end)? {
                b'"' => {
                    self.at = end + 1;
                    let span = self.builder.str(&unescaped);
                    self.unescaped = unescaped;
                    return Some(span);
                }
                b'\\' => escape = end,
                _ => return None,
            }
        }
    }

    /// The character of the escape whose letter is at `at`, and where the text goes on.
    fn escape(&self, at: usize) -> Option<(char, usize)> {
        let decoded = match *self.bytes.get(at)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4(at + 1)?;
                return match unit {
                    0xD800..=0xDBFF => {
                        // A leading surrogate must be followed by `\u` and a trailing one.
                        if self.bytes.get(at + 5..at + 7)? != b"\\u" {
                            return None;
                        }
                        let low = self.hex4(at + 7)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        Some((char::from_u32(code)?, at + 11))
                    }
                    0xDC00..=0xDFFF => None,
                    _ => Some((char::from_u32(unit)?, at + 5)),
                };
            }
            _ => return None,
        };
        Some((decoded, at + 1))
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.bytes.get(at..at + 4)?;
        digits.iter().try_fold(0u32, |code, &digit| Some(code << 4 | (digit as char).to_digit(16)?))
    }

    /// Where the run of plain string bytes from `from` ends: at a `"`, a `\`, a control
    /// character, or the end of the text (eight bytes per step; the writers' test too).
    #[inline]
    fn plain_run(&self, from: usize) -> usize {
        crate::json_text::plain_run(self.bytes, from)
    }

    /// `bytes[start..end]` as text. Both ends sit at ASCII bytes, so on character boundaries;
    /// the slice checks that in two comparisons, where `from_utf8` would read every byte.
    #[inline]
    fn text(&self, start: usize, end: usize) -> &'t str {
        self.text.get(start..end).unwrap_or_default()
    }

    /// JSON's number grammar. An integer is kept exactly (`Int`, or `UInt` above `i64::MAX`);
    /// one that needs more than 64 bits, and `-0` (serde_json makes it the float -0.0), are
    /// the strict parse's. A float's digits are gathered in the same pass ([`exact_float`]).
    fn number(&mut self) -> Option<()> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        match self.peek()? {
            b'0' => {
                if matches!(self.bytes.get(self.at + 1), Some(b'0'..=b'9')) {
                    return None; // a leading zero
                }
            }
            b'1'..=b'9' => {}
            _ => return None,
        }
        // All digits, integer part and fraction, as one integer while they fit.
        let mut digits: u64 = 0;
        let mut beyond_64_bits = false;
        self.accumulate(&mut digits, &mut beyond_64_bits);
        let mut power = 0i32;
        let mut is_float = false;
        if self.peek() == Some(b'.') {
            self.at += 1;
            let fraction_start = self.at;
            self.accumulate(&mut digits, &mut beyond_64_bits);
            if self.at == fraction_start {
                return None;
            }
            power = -((self.at - fraction_start).min(1 << 20) as i32);
            is_float = true;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            let negative_exponent = self.peek() == Some(b'-');
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            let exponent = self.digits()?;
            if exponent.len() > MAX_EXPONENT_DIGITS {
                return None;
            }
            let exponent = exponent.iter().fold(0i32, |n, digit| n * 10 + (digit - b'0') as i32);
            power += if negative_exponent { -exponent } else { exponent };
            is_float = true;
        }
        if is_float {
            let value = match (beyond_64_bits, exact_float(digits, power)) {
                (false, Some(magnitude)) => magnitude,
                _ => self.text(start, self.at).parse::<f64>().ok()?.abs(),
            };
            // Overflow and underflow (a non-zero literal read as zero) are the strict parse's.
            if !value.is_finite() || value == 0.0 && (digits != 0 || beyond_64_bits) {
                return None;
            }
            self.builder.float(if negative { -value } else { value });
            return Some(());
        }
        if beyond_64_bits {
            return None;
        }
        if negative {
            if digits == 0 || digits > i64::MIN.unsigned_abs() {
                return None;
            }
            self.builder.int((digits as i64).wrapping_neg());
        } else {
            self.builder.uint(digits);
        }
        Some(())
    }

    /// Adds the digits at `self.at` to `digits`, noting when they no longer fit.
    #[inline]
    fn accumulate(&mut self, digits: &mut u64, beyond_64_bits: &mut bool) {
        while let Some(digit @ b'0'..=b'9') = self.peek() {
            match digits.checked_mul(10).and_then(|more| more.checked_add((digit - b'0') as u64)) {
                Some(more) => *digits = more,
                None => *beyond_64_bits = true,
            }
            self.at += 1;
        }
    }

    /// One or more digits.
    fn digits(&mut self) -> Option<&[u8]> {
        let start = self.at;
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        (self.at > start).then(|| &self.bytes[start..self.at])
    }
}

/// Powers of ten that `f64` holds exactly.
const EXACT_POWERS_OF_TEN: [f64; 23] =
    [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

/// Clinger's fast path: `digits` × 10^`power` as one correctly rounded multiplication or
/// division of two exact `f64`s, when `digits` is at most 2^53 and the power at most 22 either
/// way; `None` otherwise (the standard library's parser then reads the literal). Most floats
/// in bodies (prices, ratios) are short decimals, read here without a second pass.
#[inline]
fn exact_float(digits: u64, power: i32) -> Option<f64> {
    if digits > 1 << 53 {
        return None;
    }
    match power {
        0..=22 => Some(digits as f64 * EXACT_POWERS_OF_TEN[power as usize]),
        -22..=-1 => Some(digits as f64 / EXACT_POWERS_OF_TEN[(-power) as usize]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_strict, MAX_DEPTH};
    use super::scan;

    /// What the strict parse makes of `text`: the document, or `None` when it refuses.
    fn strict(text: &str, depth: usize) -> Option<super::Document> {
        parse_strict(text.as_bytes(), depth).ok()
    }

    /// The scan accepts only what the strict parse accepts, and builds the same tape.
    fn agree(text: &str, depth: usize) -> bool {
        let fast = scan(text, depth);
        if let Some(fast) = &fast {
            let strict = strict(text, depth);
            assert_eq!(Some(fast), strict.as_ref(), "the scan accepted {text:?} differently");
            // Floats compare by value above (-0.0 == 0.0, NaN never occurs); their bits too.
            assert_eq!(format!("{fast:?}"), format!("{:?}", strict.unwrap()), "{text:?}");
        }
        fast.is_some()
    }

    #[test]
    fn the_benchmark_bodies_take_the_fast_path() {
        // Bazel points FERRULE_FIXTURES_DIR at its runfiles copy of the corpus; cargo runs here.
        let fixtures = std::env::var_os("FERRULE_FIXTURES_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures"));
        for name in ["json-small", "json-medium", "json-large"] {
            let path = fixtures.join("benchmarks/payloads").join(format!("{name}.json"));
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(agree(&text, MAX_DEPTH), "{name} was left to the strict parse");
        }
    }

    #[test]
    fn what_it_accepts_it_reads_as_the_strict_parse_does() {
        let accepted = [
            r#"{"a": 1, "b": [true, false, null], "c": {"d": "e"}}"#,
            " \t\r\n[ 1 , -2 , 3.5 , -0.25 , 1e3 , 2E-2 , 6.02e+23 , 0 , 0.0 , -0.0 ] \n",
            r#"["", "plain", "tab\there", "quote\"d", "back\\slash", "sol\/idus", "\b\f\n\r\t"]"#,
            r#"["\u00e9", "\u0000", "\uD83D\uDE00", "caf\u00e9 \u2603", "é ☃ 😀", "x\u0041y"]"#,
            "[9223372036854775807, 9223372036854775808, 18446744073709551615, -9223372036854775808]",
            "[1e300, -1e-300, 1.7976931348623157e308, 5e-324, 0.1, 0.30000000000000004, 123456789012345678901234567890.0]",
            r#"{"": 0, "a": {}, "b": [], "c": [[]], "d": [{}]}"#,
            "true",
            "\"top\"",
            "-7",
            r#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17}"#,
            r#"{"a\u0062": 1, "ab\"": 2, "same": {"same": {"same": 3}}}"#,
            // Sign of zero, and integral floats past 2^63 (the strict parse rescans those).
            "[-0.0e-3, -0e400, 0e9999, -0e0, 1e19, 10000000000000000000.0, -9223372036854775808.0, 18446744073709551615]",
            // Rounding edges: subnormal halfway, the normal boundary, f64::MAX, long tails.
            "[2.4703282292062328e-324, 2.2250738585072011e-308, 1.7976931348623158e308, 18446744073709551616.5]",
            "[9007199254740993.00000000000000000000000000000001, 0.000000000000000000000012345678901234567890123]",
        ];
        for text in accepted {
            assert!(agree(text, MAX_DEPTH), "{text:?} was left to the strict parse");
        }
    }

    #[test]
    fn what_the_strict_parse_must_judge_is_left_to_it() {
        let left = [
            "",
            "   ",
            "{",
            "[1, 2",
            "[1,]",
            r#"{"a": 1,}"#,
            r#"{"a" 1}"#,
            r#"{a: 1}"#,
            "[01]",
            "[-]",
            "[1.]",
            "[.5]",
            "[1e]",
            "[1e+]",
            "[+1]",
            "[-0]",
            "[1e400]",
            "[1e-400]",
            "[18446744073709551616]",
            "[-9223372036854775809]",
            "[123456789012345678901234567890]",
            "[tru]",
            "[nul!]",
            "[True]",
            "[NaN]",
            "\"raw\ncontrol\"",
            r#"["\x"]"#,
            r#"["\u12"]"#,
            r#"["\uD83D"]"#,
            r#"["\uD83Dx"]"#,
            r#"["\uDE00"]"#,
            r#"["\uD83D\u0041"]"#,
            r#"{"id": -5, "id": 7}"#,
            "[1] [2]",
            "[1] x",
            "\u{feff}[1]",
        ];
        for text in left {
            assert!(!agree(text, MAX_DEPTH), "{text:?} was accepted by the scan");
        }
        let many = format!("{{{}, \"k3\": 0}}", (0..40).map(|i| format!("\"k{i}\": {i}")).collect::<Vec<_>>().join(", "));
        assert!(!agree(&many, MAX_DEPTH), "a repeated key past the pairwise limit was accepted");
    }

    #[test]
    fn a_long_mantissa_rounds_as_the_strict_parse_does() {
        // Digits past the 768 that the strict parse's big-decimal path keeps exactly.
        let mut long = String::from("[1.7976931348623157");
        long.push_str(&"0".repeat(780));
        long.push_str("1e308, 0.");
        long.push_str(&"0".repeat(300));
        long.push_str("123456789012345678901234567890]");
        agree(&long, MAX_DEPTH);
    }

    #[test]
    fn nesting_is_refused_where_the_strict_parse_refuses_it() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(agree(&nested(127), MAX_DEPTH));
        assert!(!agree(&nested(128), MAX_DEPTH));
        assert!(agree(&nested(3), 3));
        assert!(!agree(&nested(4), 3));
        assert!(agree(r#"{"a": {"b": 1}}"#, 2));
        assert!(!agree(r#"{"a": {"b": {"c": 1}}}"#, 2));
    }

    #[test]
    fn the_exact_float_path_rounds_as_the_standard_parser() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut exact = 0;
        for _ in 0..200_000 {
            let digits = rng.next() >> rng.below(64);
            let power = rng.below(61) as i32 - 30;
            if let Some(value) = super::exact_float(digits, power) {
                exact += 1;
                let literal = format!("{digits}e{power}");
                assert_eq!(value.to_bits(), literal.parse::<f64>().unwrap().to_bits(), "{literal}");
            }
        }
        assert!(exact > 50_000, "only {exact} literals took the exact path");
        for (digits, power) in [((1 << 53) + 1, 0), (1, 23), (1, -23)] {
            assert_eq!(super::exact_float(digits, power), None, "{digits}e{power}");
        }
        // Through the scan: fractions, exponents and signs gathered in one pass.
        for literal in ["0.1", "-0.5", "108.6", "112.49", "1.5e3", "-2.5E-3", "123.456e-20", "0.0", "-0.0", "-0e5", "1e22", "1e23", "9007199254740993.0", "1234567890123456789012.5"] {
            let parsed = scan(&format!("[{literal}]"), MAX_DEPTH).unwrap_or_else(|| panic!("{literal} left to the strict parse"));
            assert_eq!(format!("{parsed:?}"), format!("Document([{}])", serde_json::to_string(&literal.parse::<f64>().unwrap()).unwrap()), "{literal}");
        }
    }

    /// A small generator (xorshift; fixed seed, so a failure reproduces): random documents,
    /// then the same documents with bytes dropped, repeated, swapped and replaced.
    #[test]
    fn generated_and_mutated_bodies_agree() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut accepted = 0;
        for round in 0..4000 {
            let mut text = String::new();
            generate(&mut rng, &mut text, 0);
            if agree(&text, MAX_DEPTH) {
                accepted += 1;
            }
            let mut bytes = text.into_bytes();
            for _ in 0..1 + round % 3 {
                mutate(&mut rng, &mut bytes);
            }
            if let Ok(mutated) = std::str::from_utf8(&bytes) {
                agree(mutated, MAX_DEPTH);
                agree(mutated, 2);
            }
        }
        // Generated documents are valid but for the odd repeated key, `-0` and huge exponent.
        assert!(accepted > 3000, "only {accepted} of 4000 generated documents took the fast path");
    }

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len() as u64) as usize]
        }
    }

    fn generate(rng: &mut Rng, out: &mut String, depth: usize) {
        let space = |rng: &mut Rng| rng.pick(&["", "", "", " ", "\n  ", "\t", "\r\n"]);
        let kind = if depth > 4 { rng.below(4) } else { rng.below(7) };
        match kind {
            0 => out.push_str(rng.pick(&["true", "false", "null"])),
            1 => {
                let n = rng.next();
                let text = match rng.below(8) {
                    0 => format!("{}", n as i64),
                    1 => format!("{n}"),
                    2 => format!("{}", (n % 1000) as i64 - 500),
                    3 => format!("{}.{}", n % 100000, n % 997),
                    4 => format!("-{}.{:03}e{}", n % 10, n % 1000, (n % 40) as i64 - 20),
                    5 => format!("{}E+{}", n % 50, n % 300),
                    6 => format!("{:e}", f64::from_bits(n & 0x7FEF_FFFF_FFFF_FFFF)),
                    _ => rng.pick(&["0", "-1", "0.5", "1e-7", "9223372036854775807", "-9223372036854775808"]).to_owned(),
                };
                out.push_str(&text);
            }
            2 => string(rng, out),
            3 => string(rng, out),
            4 | 5 => {
                out.push('[');
                for i in 0..rng.below(5) {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(space(rng));
                    generate(rng, out, depth + 1);
                }
                out.push(']');
            }
            _ => {
                out.push('{');
                for i in 0..rng.below(6) {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(space(rng));
                    string(rng, out);
                    out.push_str(space(rng));
                    out.push(':');
                    out.push_str(space(rng));
                    generate(rng, out, depth + 1);
                }
                out.push_str(space(rng));
                out.push('}');
            }
        }
    }

    fn string(rng: &mut Rng, out: &mut String) {
        out.push('"');
        for _ in 0..rng.below(4) {
            out.push_str(rng.pick(&[
                "id", "name", "a", "b", "a", "long enough to span words", "é", "☃", "😀", "\\n", "\\\"", "\\\\", "\\/", "\\u00e9",
                "\\u0000", "\\uD83D\\uDE00", "\\t", "x", "12345678", "\\b\\f\\r",
            ]));
        }
        out.push('"');
    }

    fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) {
        if bytes.is_empty() {
            bytes.push(b'[');
            return;
        }
        let at = rng.below(bytes.len() as u64) as usize;
        match rng.below(5) {
            0 => {
                bytes.remove(at);
            }
            1 => {
                let byte = bytes[at];
                bytes.insert(at, byte);
            }
            2 => {
                let other = rng.below(bytes.len() as u64) as usize;
                bytes.swap(at, other);
            }
            3 => {
                let alphabet = b"{}[]\",:\\-+.eE0123456789 tfnu\x01";
                bytes[at] = alphabet[rng.below(alphabet.len() as u64) as usize];
            }
            _ => bytes.truncate(at),
        }
    }
}
