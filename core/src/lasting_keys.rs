//! Object keys kept as a binding's own strings from one request to the next.
//!
//! [`KeyCache`](crate::KeyCache) makes each distinct key of a body once per conversion; a
//! route's bodies send the same keys request after request, so each request still made them
//! all again. In a served profile of Python json-medium (17 distinct keys), making a key, hashing
//! it at its first dict insert and freeing it with the body cost about 360 instructions, 6,000
//! of the request's 226,000. Kept here, a key is a table lookup and a reference count:
//! json-medium went from 226,200 to 218,100 instructions a request, json-small from 52,100 to
//! 50,400.
//!
//! Python is the binding that keeps its keys here, and, in a second table, its short string
//! values (a str is immutable, so one object can stand for a value sent again; the numbers are
//! with that table in `bindings/python/src/convert/to_python.rs`). Node's object literals (its
//! `shapes`) carry their keys from request to request already, and Ruby's keys are interned
//! strings, which Ruby keeps in its own table; a Ruby string value is mutable, so one object
//! cannot stand for two.
//!
//! The table is two-way set-associative: each key has two slots, chosen by a hash of its length
//! and of its first and last bytes, so it never holds more than [`SLOTS`] keys of at most
//! [`LONGEST`] bytes and allocates nothing after its first use. (Direct-mapped, 31 common record
//! names in 512 slots had two share a slot, each then made again on every request.)
//!
//! A new key takes an empty slot of its two; when both are full, it takes the one filled
//! earlier only if it was also the last key refused there. A key that comes back, as a
//! route's field names do, is kept at its second request; keys seen once, such as the ids of a
//! map (`{"u1842": 3, ...}`) or a client's made-up names, do not push out the kept ones and
//! cost a lookup and a refusal: about 130 instructions more than without the table (a body of
//! 400 fresh keys, 0.8% more per request). Displacing on every miss cost such a key about 500
//! (3.1%), the displaced string's freeing included.

use crate::key_cache::same_bytes;

/// Slots in the table (in pairs): the keys of a few dozen routes fit.
pub const SLOTS: usize = 1024;
/// Longer keys are not kept: they are rare in bodies, and their slots would be mostly empty.
pub const LONGEST: usize = 32;

pub struct LastingKeys<T> {
    /// Empty until the first use, then [`SLOTS`] / 2 long.
    pairs: Vec<Pair<T>>,
}

struct Pair<T> {
    slots: [Slot<T>; 2],
    /// The slot a key displaces when both are full: the one filled earlier.
    older: u8,
    /// The low bits of the hash of the last key refused here, which is kept if it comes next.
    refused: u32,
}

struct Slot<T> {
    len: u8,
    text: [u8; LONGEST],
    value: Option<T>,
}

impl<T> Slot<T> {
    #[inline]
    fn holds(&self, key: &[u8]) -> bool {
        self.value.is_some() && usize::from(self.len) == key.len() && same_bytes(&self.text[..key.len()], key)
    }
}

/// What [`LastingKeys::get_or_make`] and [`KeyCache::get_or_insert_with`](crate::KeyCache::get_or_insert_with)
/// give back.
pub enum Found<'a, T> {
    /// The value in the table (found there, or made and kept): the caller takes a reference.
    Kept(&'a T),
    /// Made and not kept: the caller's own.
    Made(T),
}

impl<T: Clone> Found<'_, T> {
    /// The value as the caller's own: the table's cloned, or the one made.
    pub fn into_owned(self) -> T {
        match self {
            Found::Kept(kept) => kept.clone(),
            Found::Made(made) => made,
        }
    }
}

impl<T> AsRef<T> for Found<'_, T> {
    fn as_ref(&self) -> &T {
        match self {
            Found::Kept(kept) => kept,
            Found::Made(made) => made,
        }
    }
}

impl<T> LastingKeys<T> {
    /// An empty table; `const` so that a binding can keep one in a `static`.
    pub const fn new() -> Self {
        LastingKeys { pairs: Vec::new() }
    }

    /// The value kept for `key`, else `make(key)`, which is kept in an empty slot of the key's
    /// two, or in place of the one filled earlier if `key` was also the last key refused there
    /// (see the module's notes). Keys longer than [`LONGEST`] are made and not kept.
    #[inline]
    pub fn get_or_make<E>(&mut self, key: &str, make: impl FnOnce(&str) -> Result<T, E>) -> Result<Found<'_, T>, E> {
        if key.len() > LONGEST {
            return make(key).map(Found::Made);
        }
        if self.pairs.is_empty() {
            let empty = || Slot { len: 0, text: [0; LONGEST], value: None };
            self.pairs = (0..SLOTS / 2).map(|_| Pair { slots: [empty(), empty()], older: 0, refused: 0 }).collect();
        }
        let hashed = hash(key.as_bytes());
        let pair = &mut self.pairs[pair_of(hashed)];
        let way = if pair.slots[0].holds(key.as_bytes()) {
            0
        } else if pair.slots[1].holds(key.as_bytes()) {
            1
        } else {
            let value = make(key)?;
            match pair.admit(hashed) {
                Some(way) => {
                    let slot = &mut pair.slots[way];
                    slot.len = key.len() as u8;
                    slot.text[..key.len()].copy_from_slice(key.as_bytes());
                    slot.value = Some(value);
                    way
                }
                None => return Ok(Found::Made(value)),
            }
        };
        Ok(Found::Kept(pair.slots[way].value.as_ref().expect("a slot that holds a key holds its value")))
    }
}

impl<T> Pair<T> {
    /// The slot a new key with hash `hashed` takes, or `None` when it is refused.
    fn admit(&mut self, hashed: u64) -> Option<usize> {
        if let Some(way) = self.slots.iter().position(|slot| slot.value.is_none()) {
            return Some(way);
        }
        if self.refused != hashed as u32 {
            self.refused = hashed as u32;
            return None;
        }
        let way = usize::from(self.older);
        self.older ^= 1;
        Some(way)
    }
}

impl<T> Default for LastingKeys<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// A multiplicative hash of `key`'s length and its bytes, read as `same_bytes` reads them (two
/// overlapping loads), plus the middle eight of a key longer than 16: numbered fields of one
/// length (`line_item_01_attribute_value`, `line_item_02_attribute_value`) differ only there.
#[inline]
pub(crate) fn hash(key: &[u8]) -> u64 {
    let len = key.len();
    let word = |at: usize| u64::from_le_bytes(key[at..at + 8].try_into().unwrap());
    let (first, last, middle) = match len {
        0 => (0, 0, 0),
        1..=3 => (u64::from(key[0]) | u64::from(key[len / 2]) << 8 | u64::from(key[len - 1]) << 16, 0, 0),
        4..=7 => (u64::from(u32::from_le_bytes(key[..4].try_into().unwrap())), u64::from(u32::from_le_bytes(key[len - 4..].try_into().unwrap())), 0),
        8..=16 => (word(0), word(len - 8), 0),
        _ => (word(0), word(len - 8), word(len / 2 - 4)),
    };
    (first ^ last.rotate_left(29) ^ middle.rotate_left(43) ^ (len as u64) << 56).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The pair of slots for a key's hash: its top bits (the multiply mixes into them).
#[inline]
fn pair_of(hashed: u64) -> usize {
    (hashed >> (64 - (SLOTS / 2).trailing_zeros())) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::convert::Infallible;
    use std::rc::Rc;

    impl<T> LastingKeys<T> {
        fn get(&self, key: &str) -> Option<&T> {
            let pair = self.pairs.get(pair_of(hash(key.as_bytes())))?;
            pair.slots.iter().find(|slot| slot.holds(key.as_bytes())).and_then(|slot| slot.value.as_ref())
        }

        /// `value` for `key` through `get_or_make`: whether the table keeps it now.
        fn offer(&mut self, key: &str, value: T) -> bool {
            matches!(self.get_or_make(key, |_| Ok::<_, Infallible>(value)).unwrap(), Found::Kept(_))
        }
    }

    #[test]
    fn a_kept_key_is_found_by_equal_text_only() {
        let mut keys = LastingKeys::new();
        assert_eq!(keys.get("name"), None);
        keys.offer("name", 1);
        keys.offer("quantity", 2);
        assert_eq!(keys.get(&String::from("name")), Some(&1));
        assert_eq!(keys.get("quantity"), Some(&2));
        for other in ["", "nam", "names", "Name", "nbme", "quantitz"] {
            assert_eq!(keys.get(other), None, "{other:?}");
        }
    }

    #[test]
    fn keys_of_every_length_up_to_the_longest_are_kept_and_longer_ones_are_not() {
        for len in 0..=LONGEST + 8 {
            let key: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            let mut keys = LastingKeys::new();
            keys.offer(&key, len);
            let expected = (len <= LONGEST).then_some(&len);
            assert_eq!(keys.get(&key), expected, "len {len}");
            // One byte changed anywhere is another key (or the same slot, but not found).
            for at in 0..len.min(LONGEST) {
                let mut other = key.clone().into_bytes();
                other[at] = b'#';
                assert_eq!(keys.get(std::str::from_utf8(&other).unwrap()), None, "len {len}, changed at {at}");
            }
        }
    }

    /// Three keys that share a pair of slots.
    fn three_of_a_pair() -> [String; 3] {
        let mut by_pair: HashMap<usize, Vec<String>> = HashMap::new();
        (0..)
            .map(|i| format!("k{i}"))
            .find_map(|key| {
                let sharing = by_pair.entry(pair_of(hash(key.as_bytes()))).or_default();
                sharing.push(key);
                (sharing.len() == 3).then(|| [sharing[0].clone(), sharing[1].clone(), sharing[2].clone()])
            })
            .unwrap()
    }

    #[test]
    fn a_key_offered_twice_in_a_row_to_a_full_pair_displaces_the_earlier_filled_slot() {
        let [first, second, third] = three_of_a_pair();
        let mut keys = LastingKeys::new();
        let displaced = Rc::new(());
        assert!(keys.offer(&first, displaced.clone()));
        assert!(keys.offer(&second, Rc::new(())));
        assert!(keys.get(&first).is_some() && keys.get(&second).is_some());
        // Refused the first time: a key seen once does not push out a kept one.
        assert!(!keys.offer(&third, Rc::new(())));
        assert!(keys.get(&third).is_none());
        assert_eq!(Rc::strong_count(&displaced), 2);
        // Kept the second time, in the slot filled earlier, whose value is dropped.
        assert!(keys.offer(&third, Rc::new(())));
        assert!(keys.get(&first).is_none());
        assert!(keys.get(&second).is_some() && keys.get(&third).is_some());
        assert_eq!(Rc::strong_count(&displaced), 1, "the displaced value was dropped");
        // The next displacement takes the other slot.
        assert!(!keys.offer(&first, Rc::new(())));
        assert!(keys.offer(&first, Rc::new(())));
        assert!(keys.get(&second).is_none());
        assert!(keys.get(&first).is_some() && keys.get(&third).is_some());
    }

    #[test]
    fn keys_seen_once_do_not_displace_kept_ones() {
        // A stream of fresh keys (a map's ids) after a route's field names.
        let fields = ["order_id", "customer", "id", "name", "email", "items", "sku", "quantity"];
        let mut keys = LastingKeys::new();
        for name in fields {
            keys.offer(name, name.len());
        }
        let kept_fresh = (0..100_000).filter(|i| keys.offer(&format!("user-{i}"), 0)).count();
        for name in fields {
            assert_eq!(keys.get(name), Some(&name.len()), "{name:?} was pushed out");
        }
        // Fresh keys filled the empty slots, and rarely one that happened to follow a refusal
        // of a key with the same hash bits; none of them displaced a field name.
        assert!(kept_fresh <= SLOTS - fields.len() + 16, "{kept_fresh} fresh keys kept");
    }

    #[test]
    fn a_kept_key_is_not_made_again() {
        let mut keys = LastingKeys::new();
        assert!(keys.offer("name", 1));
        let found = keys.get_or_make("name", |_| Err("made again")).unwrap();
        assert!(matches!(found, Found::Kept(&1)));
        let pair = &keys.pairs[pair_of(hash(b"name"))];
        assert_eq!(pair.slots.iter().filter(|slot| slot.value.is_some()).count(), 1);
    }

    #[test]
    fn a_failed_make_keeps_nothing_and_a_long_key_is_made_every_time() {
        let mut keys: LastingKeys<u32> = LastingKeys::new();
        assert_eq!(keys.get_or_make("name", |_| Err("no")).err(), Some("no"));
        assert_eq!(keys.get("name"), None);
        let long = "k".repeat(LONGEST + 1);
        for _ in 0..2 {
            assert!(matches!(keys.get_or_make(&long, |_| Ok::<_, Infallible>(7)).unwrap(), Found::Made(7)));
        }
    }

    #[test]
    fn the_keys_of_common_record_bodies_are_all_kept_at_once() {
        // The benchmark payloads' keys and common names of a record, as one app's routes might
        // send them: none may push another out, or it would be made again on every request.
        let names = [
            "order_id", "customer", "id", "name", "email", "address", "street", "city", "postcode", "country", "items",
            "sku", "quantity", "unit_price", "gift", "notes", "created_at", "tags", "price", "in_stock", "status",
            "user_id", "type", "value", "description", "updated_at", "count", "total", "data", "error", "message",
            "username", "password", "first_name", "last_name", "phone", "title", "body", "url", "page", "limit",
            "offset", "sort", "filter", "query", "token", "amount", "currency", "date", "time", "level", "code",
            // Numbered fields of one length, alike but for their middle.
            "line_item_01_attribute_value", "line_item_02_attribute_value", "line_item_03_attribute_value",
            "line_item_04_attribute_value", "line_item_05_attribute_value", "line_item_06_attribute_value",
        ];
        let mut keys = LastingKeys::new();
        for (i, name) in names.iter().enumerate() {
            keys.offer(name, i);
        }
        for (i, name) in names.iter().enumerate() {
            assert_eq!(keys.get(name), Some(&i), "{name:?} was pushed out");
        }
    }
}
