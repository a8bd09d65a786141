//! Object keys already turned into a binding's own string values, for one conversion of a
//! JSON body into Python, JavaScript or Ruby objects.
//!
//! Bodies repeat a few keys many times (an array of records), and creating a language string
//! per occurrence is a large part of the crossing's cost. A document keeps an object's members
//! in the order they were sent, and the records of one body list their fields in one order, so
//! they ask for the same keys in the same sequence: a lookup starts just after the previous hit
//! and usually succeeds at the first comparison.

pub struct KeyCache<'k, T> {
    entries: Vec<(&'k str, T)>,
    next: usize,
}

/// Beyond this many distinct keys the body is not record-shaped; new keys are not kept.
const CAPACITY: usize = 64;

impl<'k, T: Clone> KeyCache<'k, T> {
    pub fn new() -> Self {
        KeyCache { entries: Vec::new(), next: 0 }
    }

    /// The cached value for `key`, or `make(key)` (kept while there is room).
    pub fn get_or_insert_with<E>(&mut self, key: &'k str, make: impl FnOnce(&str) -> Result<T, E>) -> Result<T, E> {
        let n = self.entries.len();
        for step in 0..n {
            let at = if self.next + step < n { self.next + step } else { self.next + step - n };
            if self.entries[at].0 == key {
                self.next = at + 1;
                return Ok(self.entries[at].1.clone());
            }
        }
        let value = make(key)?;
        if n < CAPACITY {
            self.entries.push((key, value.clone()));
            self.next = n + 1;
        }
        Ok(value)
    }
}

impl<T: Clone> Default for KeyCache<'_, T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

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
        let got: Vec<String> = keys.iter().map(|k| cache.get_or_insert_with(k, &mut make).unwrap()).collect();
        assert_eq!(got, ["GIFT", "NAME", "SKU", "GIFT", "NAME", "SKU", "NAME", "OTHER", "GIFT"]);
        drop(make);
        assert_eq!(made, ["gift", "name", "sku", "other"]);
    }

    #[test]
    fn keys_past_capacity_are_still_converted() {
        let names: Vec<String> = (0..CAPACITY + 10).map(|i| format!("k{i}")).collect();
        let mut made = Vec::new();
        let mut make = make_counting(&mut made);
        let mut cache = KeyCache::new();
        for _ in 0..2 {
            for name in &names {
                assert_eq!(cache.get_or_insert_with(name, &mut make).unwrap(), name.to_uppercase());
            }
        }
        drop(make);
        // The first CAPACITY keys are made once; the rest every time they occur.
        assert_eq!(made.len(), CAPACITY + 10 * 2);
    }

    #[test]
    fn a_failed_conversion_is_not_cached() {
        let mut cache: KeyCache<'_, u32> = KeyCache::new();
        assert_eq!(cache.get_or_insert_with("a", |_| Err("no")), Err("no"));
        assert_eq!(cache.get_or_insert_with("a", |_| Ok::<_, &str>(7)), Ok(7));
        assert_eq!(cache.get_or_insert_with("a", |_| Err("made twice")), Ok(7));
    }
}
