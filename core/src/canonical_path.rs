//! One spelling for a path, so a route matches the spellings of its path that RFC 3986
//! (§6.2.2) calls the same (`/%65ncoded` is `/encoded`, `/caf%c3%a9` is `/caf%C3%A9`), and
//! those Starlette, Fastify and Sinatra match too (`/te%2Bst` is `/te+st`: an escaped
//! sub-delimiter, which RFC 3986 leaves to the application). Clients, proxies and
//! hand-written links use either; the router compares text. Templates are written in this spelling when they are parsed
//! (`path::PathTemplate`), and a request's path is put in it before the router sees it.
//!
//! The spelling: what a path may carry as it is (letters, digits, `-._~`, `!$&'()*+,;=`, `:`
//! and `@`) appears as itself, an escape of it decoded; anything else is an escape with
//! upper-case hex, a raw character (`[`, `é`) encoded. `/`, `%`, `:` and `*` are never decoded
//! (`:` and `*` start a parameter in a template, so a prefix `/%3Aid` must not become one), so `%2F`
//! stays data inside its segment and `%25` stays a percent. A path with a `%` that starts no
//! escape is left as it is, for the route to refuse (400, `route::escapes_are_whole`):
//! decoding around it could assemble a new escape (`/%%34%31` would become `/%41`), so the
//! spelling of a spelled path would change again.
//!
//! A request pays one scan of its path's bytes, a table load each, and nothing more when the
//! path is already in this spelling, as nearly every one is: 6.5 ns for `/json-small`, 25 ns
//! for a 45-byte path with a UUID (release build, one core, 5 M calls). The new path is built
//! only for a path that needs it (28 ns for `/caf%c3%a9/x`).

/// Whether `byte` appears as itself in the spelling, `/` and `%` aside.
fn plain(byte: u8) -> bool {
    PLAIN[usize::from(byte)]
}

/// Whether an escape of `byte` is decoded: a plain byte, but for `:` and `*`, which would be
/// read as template syntax where a segment starts.
fn decoded(byte: u8) -> bool {
    plain(byte) && !matches!(byte, b':' | b'*')
}

/// [`plain`] as a table: one load a byte (a chain of compares was 1 ns a byte).
const PLAIN: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~' | b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' | b':' | b'@');
        byte += 1;
    }
    table
};

/// `path` in the one spelling, without dot segments, or `None` when it is so already (or has a
/// `%` that starts no escape, and is left for the route to refuse).
pub fn canonical(path: &str) -> Option<String> {
    // Nearly every path is letters, digits, `/` and the like, without a dot: one table load a
    // byte says it needs nothing, as before dot segments were looked for.
    if path.bytes().all(|byte| SETTLED[usize::from(byte)]) {
        return None;
    }
    let spelled = spelling(path);
    without_dot_segments(spelled.as_deref().unwrap_or(path)).or(spelled)
}

/// The bytes a path in the spelling may hold that start no dot segment: [`PLAIN`] and `/`,
/// but not `.`.
const SETTLED: [bool; 256] = {
    let mut table = PLAIN;
    table[b'/' as usize] = true;
    table[b'.' as usize] = false;
    table
};

/// `path` without its `.` and `..` segments, as RFC 3986 (§5.2.4) resolves them and as a
/// browser sends a path: `/files/../users/1` is `/users/1`, and `/dl/%2e%2e/etc` (spelled
/// `/dl/../etc`) is `/etc`. Only a hand-made request carries one, and a route that takes the
/// rest of a path (`{rest:path}`, Sinatra's `*`) handed it to the handler, which sent
/// `/etc/hostname` for `send_file File.join(dir, splat)`; Sinatra's Rack::Protection cleans
/// such a path (found by a differential run beside Sinatra 3). `None` when it has none. Only a
/// path with a dot is looked at ([`SETTLED`]): a search for `/.` in every path cost 75 to 84
/// instructions a request (callgrind, `/json/small` and a 50-byte path).
fn without_dot_segments(path: &str) -> Option<String> {
    if !path.as_bytes().windows(2).any(|pair| pair == b"/.") {
        return None;
    }
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    if !segments.iter().any(|segment| matches!(*segment, "." | "..")) {
        return None;
    }
    let last = segments.len() - 1;
    let mut kept: Vec<&str> = Vec::with_capacity(segments.len());
    for (at, segment) in segments.into_iter().enumerate() {
        match segment {
            "." => {}
            ".." => {
                kept.pop();
            }
            other => kept.push(other),
        }
        // A path ending in a dot segment names a folder: `/a/b/..` is `/a/`.
        if at == last && matches!(segment, "." | "..") {
            kept.push("");
        }
    }
    Some(format!("/{}", kept.join("/")))
}

/// `path` in the one spelling, or `None` when it is in it already (or has a `%` that starts
/// no escape).
fn spelling(path: &str) -> Option<String> {
    let bytes = path.as_bytes();
    // Nearly every path is letters, digits, `/` and the like: one table load a byte says so.
    if bytes.iter().all(|&byte| byte == b'/' || plain(byte)) {
        return None;
    }
    if bytes.iter().enumerate().any(|(at, &byte)| byte == b'%' && escape(bytes, at).is_none()) {
        return None;
    }
    let first = bytes.iter().enumerate().position(|(at, &byte)| needs_work(bytes, at, byte))?;
    let mut out = String::with_capacity(path.len() + 8);
    out.push_str(&path[..first]);
    let mut at = first;
    while at < bytes.len() {
        let byte = bytes[at];
        match escape(bytes, at) {
            Some(byte) if decoded(byte) => out.push(byte as char),
            Some(byte) => push_escape(&mut out, byte),
            None if byte == b'/' || plain(byte) => out.push(byte as char),
            None => {
                // A character a path cannot carry as it is: its UTF-8 bytes, escaped.
                let len = utf8_len(byte);
                for &part in &bytes[at..at + len] {
                    push_escape(&mut out, part);
                }
                at += len;
                continue;
            }
        }
        at += if bytes[at] == b'%' && escape(bytes, at).is_some() { 3 } else { 1 };
    }
    Some(out)
}

fn needs_work(bytes: &[u8], at: usize, byte: u8) -> bool {
    match byte {
        b'%' => match escape(bytes, at) {
            // An escape to decode, or with lower-case hex.
            Some(byte) => decoded(byte) || bytes[at + 1..at + 3].iter().any(u8::is_ascii_lowercase),
            None => false,
        },
        b'/' => false,
        _ => !plain(byte),
    }
}

/// The byte an escape at `at` (`%` and two hex digits) stands for.
fn escape(bytes: &[u8], at: usize) -> Option<u8> {
    if bytes[at] != b'%' {
        return None;
    }
    let hex = bytes.get(at + 1..at + 3)?;
    let digit = |d: u8| (d as char).to_digit(16);
    Some((digit(hex[0])? * 16 + digit(hex[1])?) as u8)
}

fn push_escape(out: &mut String, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('%');
    out.push(HEX[usize::from(byte >> 4)] as char);
    out.push(HEX[usize::from(byte & 15)] as char);
}

/// The length of the UTF-8 character that starts with `byte` (a `&str` holds whole ones).
fn utf8_len(byte: u8) -> usize {
    match byte {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::canonical;

    fn spelled(path: &str) -> String {
        canonical(path).unwrap_or_else(|| path.to_owned())
    }

    #[test]
    fn equivalent_spellings_become_one() {
        for (given, one) in [
            ("/%65ncoded", "/encoded"),
            ("/caf%c3%a9", "/caf%C3%A9"),
            ("/café", "/caf%C3%A9"),
            ("/te%2Bst/", "/te+st/"),
            ("/t%7Eu", "/t~u"),
            ("/q%27r", "/q'r"),
            ("/[x]", "/%5Bx%5D"),
            ("/a b", "/a%20b"),
            ("/%5bx%5d", "/%5Bx%5D"),
            // Found on review: a decoded `:` or `*` became template syntax in a prefix.
            ("/%3aid/%2a", "/%3Aid/%2A"),
        ] {
            assert_eq!(spelled(given), one, "{given}");
        }
    }

    #[test]
    fn dot_segments_are_resolved_as_a_browser_resolves_them() {
        for (given, one) in [
            ("/files/../users/1", "/users/1"),
            ("/dl/../../../../etc/hostname", "/etc/hostname"),
            ("/dl/%2e%2e/%2E%2E/etc", "/etc"),
            ("/a/./b/.", "/a/b/"),
            ("/a/b/..", "/a/"),
            ("/a//../b", "/a/b"),
            ("/..", "/"),
            ("/caf%c3%a9/../x", "/x"),
        ] {
            assert_eq!(spelled(given), one, "{given}");
        }
        // Dots inside a segment are a name, and `%2F` stays data inside its segment.
        for kept in ["/a/..b/c.", "/.well-known/x", "/a/...", "/dl/..%2F..%2Fetc"] {
            assert_eq!(canonical(kept), None, "{kept}");
        }
    }

    #[test]
    fn separators_percents_and_broken_escapes_are_kept() {
        for kept in ["/a%2Fb", "/100%25", "/users/7", "/v1/items:batch@x", "/%zz", "/ok%", "/ok%2", "/"] {
            assert_eq!(canonical(kept), None, "{kept}");
        }
        assert_eq!(spelled("/a%2fb/%7e"), "/a%2Fb/~");
    }

    // Found on review: around a `%` that starts no escape, decoding assembled new escapes
    // (`/%%34%31` became `/%41`, and `/files/%%32%65%%32%65` became `/files/%2e%2e`, which
    // then passed the route's escape check where it had been a 400).
    #[test]
    fn a_path_with_a_broken_escape_is_left_as_it_is_and_spelling_is_settled_in_one_pass() {
        for broken in ["/%%34%31", "/files/%%32%65%%32%65", "/%e9%zz", "/caf%c3%a9/%"] {
            assert_eq!(canonical(broken), None, "{broken}");
        }
        for path in ["/%65ncoded", "/caf%c3%a9", "/te%2bst/%7e", "/[x]", "/a b/%41%2f", "/%2e%2e/x"] {
            let once = spelled(path);
            assert_eq!(canonical(&once), None, "{path} spelled once is {once}, and stays so");
        }
    }
}
