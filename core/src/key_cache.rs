//! Object keys already turned into a binding's own string values, for one conversion of a
//! JSON body into Python, JavaScript or Ruby objects.
//!
//! Bodies repeat a few keys many times (an array of records), and creating a language string
//! per occurrence is a large part of the crossing's cost. A binding asks for a body's keys in an
//! order fixed by its walk (the order they were sent, or Python's: a member's key after its
//! value), and the records of one body list their fields in one order, so each key remembers
//! which key was asked for after it last time: the next lookup compares that one key first and
//! usually hits at once.
//!
//! Remembering only a position (the entry after the last hit) missed whenever a record's field
//! had first been seen elsewhere: json-large's items reuse `name` from the customer, so every
//! item cost two searches of the cache. With the successor kept per key, an item's five lookups
//! are five first comparisons.
//!
//! A key met for the first time misses the expected one too, and searching the entries before
//! making it found nothing: json-medium's 17 distinct keys cost 17 of its 19 searches, each a
//! comparison with every key made so far, and four reallocations of a growing table. A 64-bit
//! mask of the hashes of the keys made so far says when a key cannot be in the table, and the
//! table is allocated once, at its first key, for half its capacity. A hit hands out the kept
//! value by reference ([`Found::Kept`]), so a binding whose values are counted references takes
//! none for a key it only inserts (Python inserts it with `PyDict_SetItem` straight from the
//! cache). Python sync, served, server and load on two pinned cores, six interleaved runs each:
//! json-medium 20.9 → 19.9 CPU-µs a request, json-large 105.5 → 101.5; instructions (callgrind)
//! 192,155 → 189,273 and 1,565,312 → 1,536,466. The time fell by more than the count: what
//! went were calls into the interpreter (a count up and down per key) and reallocations.

use crate::lasting_keys::{hash, Found};

pub struct KeyCache<'k, T> {
    entries: Vec<Entry<'k, T>>,
    /// The entry of the last lookup, whose `then` is the expected next key.
    last: Option<usize>,
    /// One bit per key made, chosen by the top six bits of its hash: a key whose bit is clear
    /// is not among the entries.
    made: u64,
    /// Lookups that searched the entries (the cost model's tests read it).
    #[cfg(test)]
    searches: usize,
}

struct Entry<'k, T> {
    key: &'k str,
    value: T,
    /// The entry looked up right after this one, the last time this one was looked up.
    then: usize,
}

/// Beyond this many distinct keys the body is not record-shaped; new keys are not kept.
const CAPACITY: usize = 64;

impl<'k, T> KeyCache<'k, T> {
    pub fn new() -> Self {
        KeyCache {
            entries: Vec::new(),
            last: None,
            made: 0,
            #[cfg(test)]
            searches: 0,
        }
    }

    /// The cached value for `key`, or `make(key)` (kept while there is room: [`Found::Kept`]
    /// either way, [`Found::Made`] past the capacity).
    ///
    /// The expected key is compared here, inlined into the caller's walk; the search of the
    /// other entries and the miss are out of line.
    #[inline]
    pub fn get_or_insert_with<E>(&mut self, key: &'k str, make: impl FnOnce(&str) -> Result<T, E>) -> Result<Found<'_, T>, E> {
        let expected = self.last.map_or(0, |last| self.entries[last].then);
        if let Some(entry) = self.entries.get(expected) {
            if same_key(entry.key, key) {
                self.last = Some(expected);
                return Ok(Found::Kept(&self.entries[expected].value));
            }
        }
        self.search_or_insert(key, make)
    }

    #[inline(never)]
    fn search_or_insert<E>(&mut self, key: &'k str, make: impl FnOnce(&str) -> Result<T, E>) -> Result<Found<'_, T>, E> {
        let bit = 1 << (hash(key.as_bytes()) >> 58);
        let kept = if self.made & bit == 0 {
            None
        } else {
            #[cfg(test)]
            {
                self.searches += 1;
            }
            self.entries.iter().position(|entry| same_key(entry.key, key))
        };
        let at = match kept {
            Some(at) => at,
            None => {
                let value = make(key)?;
                let at = self.entries.len();
                if at == CAPACITY {
                    return Ok(Found::Made(value));
                }
                if at == 0 {
                    self.entries.reserve_exact(CAPACITY / 2);
                }
                self.made |= bit;
                self.entries.push(Entry { key, value, then: at + 1 });
                at
            }
        };
        if let Some(last) = self.last {
            self.entries[last].then = at;
        }
        self.last = Some(at);
        Ok(Found::Kept(&self.entries[at].value))
    }
}

/// `a == b`, with keys of up to 16 bytes compared by two overlapping word loads each way.
///
/// Nearly every lookup is a hit on a short key, and `==` on slices calls libc's `memcmp` for
/// each: in a served profile of Python json-large (838 keys, 3 to 10 bytes), `memcmp` took 4.2%
/// of the server's CPU beside the cache's own 4.8%.
#[inline]
fn same_key(a: &str, b: &str) -> bool {
    same_bytes(a.as_bytes(), b.as_bytes())
}

/// [`same_key`] on bytes (the lasting table keeps its keys' text as bytes).
#[inline]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let len = a.len();
    if len != b.len() {
        return false;
    }
    // Each arm reads the first and the last `N` bytes (overlapping when `len < 2N`), which
    // together cover every byte of a key with `N <= len <= 2N`.
    fn ends<const N: usize>(x: &[u8]) -> ([u8; N], [u8; N]) {
        let first: [u8; N] = x[..N].try_into().unwrap();
        let last: [u8; N] = x[x.len() - N..].try_into().unwrap();
        (first, last)
    }
    match len {
        0 => true,
        1 => a[0] == b[0],
        2..=3 => ends::<2>(a) == ends::<2>(b),
        4..=7 => ends::<4>(a) == ends::<4>(b),
        8..=16 => ends::<8>(a) == ends::<8>(b),
        _ => a == b,
    }
}

impl<T> Default for KeyCache<'_, T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    /// A lookup's value as the caller's own.
    fn get<'k, T: Clone, E>(cache: &mut KeyCache<'k, T>, key: &'k str, make: impl FnOnce(&str) -> Result<T, E>) -> Result<T, E> {
        cache.get_or_insert_with(key, make).map(Found::into_owned)
    }

    fn make_counting(made: &mut Vec<String>) -> impl FnMut(&str) -> Result<String, Infallible> + '_ {
        move |key| {
            made.push(key.to_owned());
            Ok(key.to_uppercase())
        }
    }

    #[test]
    fn each_distinct_key_is_made_once() {
        let mut made = Vec::new();
        let mut make = make_counting(&mut made);
        let mut cache = KeyCache::new();
        let keys = ["gift", "name", "sku", "gift", "name", "sku", "name", "other", "gift"];
        let got: Vec<String> = keys.iter().map(|k| get(&mut cache, k, &mut make).unwrap()).collect();
        assert_eq!(got, ["GIFT", "NAME", "SKU", "GIFT", "NAME", "SKU", "NAME", "OTHER", "GIFT"]);
        drop(make);
        assert_eq!(made, ["gift", "name", "sku", "other"]);
    }

    #[test]
    fn records_hit_the_expected_key_even_when_their_fields_were_seen_elsewhere_first() {
        // json-large's shape: `name` first appears in the customer, then in every item.
        let head = ["order_id", "customer", "id", "name", "email", "notes", "items"];
        let item = ["sku", "name", "quantity", "unit_price", "gift"];
        let mut cache = KeyCache::new();
        for key in head.iter().chain(&item) {
            get(&mut cache, key, |k| Ok::<_, Infallible>(k.len())).unwrap();
        }
        let after_first_item = cache.searches;
        for _ in 0..100 {
            for key in item {
                assert_eq!(get(&mut cache, key, |_| Ok::<_, Infallible>(0)).unwrap(), key.len());
            }
        }
        // The second item's `sku` follows the first's `gift` for the first time; nothing after.
        assert_eq!(cache.searches - after_first_item, 1);
    }

    #[test]
    fn a_key_met_for_the_first_time_is_made_without_a_search() {
        // json-medium's keys in the order it sends them (17 distinct, `name` twice).
        let head = ["order_id", "customer", "id", "name", "email", "address", "street", "city", "postcode", "country", "created_at", "notes", "items"];
        let item = ["sku", "name", "quantity", "unit_price", "gift"];
        let mut cache = KeyCache::new();
        let mut made = 0;
        for key in head.iter().chain(&item) {
            get(&mut cache, key, |k| {
                made += 1;
                Ok::<_, Infallible>(k.len())
            })
            .unwrap();
        }
        assert_eq!(made, 17, "`name` is made once");
        // Only `name`'s second sighting searches, and a new key whose bit an earlier key had
        // already set (17 keys in 64 bits share few). Without the mask: 18 searches.
        assert!(cache.searches <= 4, "{} searches", cache.searches);
        // Kept keys are still found when they are not the expected one.
        for key in item.iter().rev() {
            assert_eq!(get(&mut cache, key, |_| Ok::<_, Infallible>(0)).unwrap(), key.len());
        }
    }

    #[test]
    fn keys_past_capacity_are_still_converted() {
        let names: Vec<String> = (0..CAPACITY + 10).map(|i| format!("k{i}")).collect();
        let mut made = Vec::new();
        let mut make = make_counting(&mut made);
        let mut cache = KeyCache::new();
        for _ in 0..2 {
            for name in &names {
                assert_eq!(get(&mut cache, name, &mut make).unwrap(), name.to_uppercase());
            }
        }
        drop(make);
        // The first CAPACITY keys are made once; the rest every time they occur.
        assert_eq!(made.len(), CAPACITY + 10 * 2);
    }

    #[test]
    fn same_key_agrees_with_equality_at_every_length_and_position() {
        for len in 0..40 {
            let a: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            assert!(same_key(&a, &a.clone()), "len {len}");
            for at in 0..len {
                let mut b = a.clone().into_bytes();
                b[at] = b'#';
                let b = String::from_utf8(b).unwrap();
                assert!(!same_key(&a, &b), "len {len}, differing at {at}");
            }
            // Equal prefixes of different lengths.
            assert!(!same_key(&a, &format!("{a}x")), "len {len} against len {}", len + 1);
        }
        assert!(same_key("é", "é"));
        assert!(!same_key("é", "è"));
    }

    #[test]
    fn a_failed_conversion_is_not_cached() {
        let mut cache: KeyCache<'_, u32> = KeyCache::new();
        assert_eq!(get(&mut cache, "a", |_| Err("no")), Err("no"));
        assert_eq!(get(&mut cache, "a", |_| Ok::<_, &str>(7)), Ok(7));
        assert_eq!(get(&mut cache, "a", |_| Err("made twice")), Ok(7));
    }
}
