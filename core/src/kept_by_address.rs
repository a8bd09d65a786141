//! Values kept by the address of a binding's object, for an object met again: Python's writer
//! keeps a key's JSON text this way (`bindings/python/src/convert/written_keys.rs`), so a key
//! written before is one copy instead of a call into the interpreter and a scan for escapes.
//!
//! An address names one object only while that object lives: a freed object's address can be
//! given to a new one. So a value kept here must own its object (hold a reference to it), and
//! is let go only when its slot is given to another address or the table is dropped; the
//! binding drops values only where it may release its objects (Python: with the GIL held).
//!
//! The table is set-associative: an address may sit in one of [`WAYS`] slots of the set its
//! hash chooses. The hash multiplies the address by a large odd number and keeps the top bits,
//! which depend on all of its bits: an allocator hands out objects of one size class at a fixed
//! stride (CPython: 64 bytes for most short strs), so the address's own low bits put objects
//! made one after another in a quarter of the sets.
//!
//! Within a set, a slot is marked when it is filled and each time it is found. A miss gives its
//! object the set's first unmarked slot; when all are marked, it clears the marks instead and
//! keeps nothing, so a slot no longer met gives way at the next miss after (a clock of one
//! bit). A slot filled unmarked was the next miss's to take, and two objects of one set took it
//! from each other at every use: json-large's echo, served by Python, wrote 11 of its 838 keys
//! a request the long way in one process (callgrind, `PYTHONHASHSEED=0`), and 0 here: 1,380,228
//! → 1,378,381 instructions a request, the misses saved less about five instructions a found
//! key costs more here than in the binding's own table before (a wider slot).

/// The slots an address may sit in. Addresses differ from one process to the next, so this
/// decides how often a use's hot objects outnumber their slots. With one, two objects of a
/// set take turns missing; with four, five must meet in one set (for Python's 18 keys of
/// json-large in 32 sets, 0.008 times on average).
pub const WAYS: usize = 4;

/// The table, of `SETS` sets of [`WAYS`] slots: a power of two.
pub struct KeptByAddress<T, const SETS: usize> {
    sets: Box<[[Slot<T>; WAYS]; SETS]>,
}

struct Slot<T> {
    /// 0 while the slot is empty: no object lives at address 0.
    address: usize,
    /// Found or filled since a miss in this set last cleared the marks.
    recent: bool,
    value: Option<T>,
}

impl<T, const SETS: usize> KeptByAddress<T, SETS> {
    /// log2 of [`SETS`].
    const SET_BITS: u32 = {
        assert!(SETS.is_power_of_two(), "SETS: a power of two");
        SETS.trailing_zeros()
    };

    pub fn new() -> Self {
        let sets: Box<[[Slot<T>; WAYS]]> =
            (0..SETS).map(|_| std::array::from_fn(|_| Slot { address: 0, recent: false, value: None })).collect();
        KeptByAddress { sets: sets.try_into().unwrap_or_else(|_| unreachable!("SETS sets were made")) }
    }

    #[inline]
    fn set(&mut self, address: usize) -> &mut [Slot<T>; WAYS] {
        let hashed = (address as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // A table of one set (`SET_BITS` 0) must not shift by 64.
        let set = hashed.checked_shr(64 - Self::SET_BITS).unwrap_or(0) as usize;
        // `% SETS` changes no index (the shift leaves `SET_BITS` bits); it lets the compiler
        // drop the bounds check on this lookup, which every written key makes.
        &mut self.sets[set % SETS]
    }

    /// The value kept for the object at `address` (not 0), marked as found.
    #[inline]
    pub fn get(&mut self, address: usize) -> Option<&T> {
        let slot = self.set(address).iter_mut().find(|slot| slot.address == address)?;
        slot.recent = true;
        slot.value.as_ref()
    }

    /// After a miss for `address` (not 0): keeps `make()` (when it gives a value, which must
    /// own the object at `address`) in the set's first unmarked slot, letting go of what was
    /// there; or, when every slot is marked, clears the marks and keeps nothing.
    pub fn keep(&mut self, address: usize, make: impl FnOnce() -> Option<T>) {
        let set = self.set(address);
        let Some(slot) = set.iter_mut().find(|slot| !slot.recent) else {
            set.iter_mut().for_each(|slot| slot.recent = false);
            return;
        };
        if let Some(value) = make() {
            *slot = Slot { address, recent: true, value: Some(value) };
        }
    }
}

impl<T, const SETS: usize> Default for KeptByAddress<T, SETS> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    /// Addresses of one set, `n` of them, as an allocator's stride would hand them out.
    fn same_set(table: &mut KeptByAddress<u32, 32>, n: usize) -> Vec<usize> {
        let first = table.set(0x1000).as_ptr();
        (0..).map(|i| 0x1000 + 64 * i).filter(|&address| table.set(address).as_ptr() == first).take(n).collect()
    }

    #[test]
    fn a_kept_value_is_found_by_its_address_only() {
        let mut table = KeptByAddress::<u32, 32>::new();
        assert_eq!(table.get(0x1000), None);
        table.keep(0x1000, || Some(7));
        assert_eq!(table.get(0x1000), Some(&7));
        assert_eq!(table.get(0x1040), None);
        table.keep(0x1040, || None);
        assert_eq!(table.get(0x1040), None, "nothing made, nothing kept");
    }

    #[test]
    fn objects_that_share_a_set_are_all_kept_up_to_its_ways() {
        // Filled unmarked, the second of two took the first's slot, and each miss after
        // took the other's: none was ever found.
        let mut table = KeptByAddress::<u32, 32>::new();
        let addresses = same_set(&mut table, WAYS);
        for round in 0..3 {
            for (i, &address) in addresses.iter().enumerate() {
                match table.get(address) {
                    Some(&kept) => assert!(round > 0 && kept == i as u32),
                    None => {
                        assert_eq!(round, 0, "{address:#x} missed in round {round}");
                        table.keep(address, || Some(i as u32));
                    }
                }
            }
        }
    }

    #[test]
    fn one_more_than_the_ways_misses_alone_and_a_stale_slot_gives_way() {
        let mut table = KeptByAddress::<u32, 32>::new();
        let addresses = same_set(&mut table, WAYS + 1);
        let (hot, extra) = addresses.split_at(WAYS);
        for &address in hot {
            table.keep(address, || Some(1));
        }
        // All marked: the extra one clears the marks and is not kept.
        table.keep(extra[0], || Some(2));
        assert_eq!(table.get(extra[0]), None);
        // The hot ones found again are marked again, except the first, no longer met.
        for &address in &hot[1..] {
            assert_eq!(table.get(address), Some(&1));
        }
        table.keep(extra[0], || Some(2));
        assert_eq!(table.get(extra[0]), Some(&2));
        assert_eq!(table.get(hot[0]), None, "the stale slot was the one given");
        assert!(hot[1..].iter().all(|&address| table.get(address) == Some(&1)));
    }

    #[test]
    fn a_displaced_value_is_let_go_and_the_table_drops_the_rest() {
        let mut table = KeptByAddress::<Rc<()>, 1>::new();
        let owned = Rc::new(());
        let addresses: Vec<usize> = (0..=WAYS).map(|i| 0x1000 + 64 * i).collect();
        for &address in &addresses[..WAYS] {
            table.keep(address, || Some(owned.clone()));
        }
        assert_eq!(Rc::strong_count(&owned), 1 + WAYS);
        table.keep(addresses[WAYS], || Some(owned.clone())); // clears the marks
        table.keep(addresses[WAYS], || Some(Rc::new(()))); // displaces one
        assert_eq!(Rc::strong_count(&owned), WAYS);
        drop(table);
        assert_eq!(Rc::strong_count(&owned), 1);
    }

    #[test]
    fn objects_at_a_fixed_stride_spread_over_the_sets() {
        // 18 objects 64 bytes apart (CPython's short strs), in 32 sets: the address's bits
        // above 16-byte alignment put them in 8 sets, three in a set at least.
        let mut table = KeptByAddress::<u32, 32>::new();
        let mut sets = std::collections::HashSet::new();
        for i in 0..18 {
            sets.insert(table.set(0x7f00_0000_1000 + 64 * i).as_ptr());
        }
        assert!(sets.len() >= 12, "18 objects in {} sets", sets.len());
    }
}
