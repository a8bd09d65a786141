//! A dict key's JSON text (`"name":`), kept per thread by the key's identity, so a key met
//! again is one copy instead of a call into the interpreter for its UTF-8 and a scan for
//! escapes.
//!
//! Responses repeat their keys: a list of records repeats each record's, and a handler's
//! literal keys (`{"body": ...}`, `{"path": ...}`) are the same str objects on every request,
//! because CPython keeps a function's constants. Request bodies' keys come from the lasting-key
//! table (`ferrule_core::lasting_keys`), so an echoed body's keys are the same objects too.
//!
//! The table is `ferrule_core::kept_by_address`: each slot owns a reference to its key, so a
//! key's address can name no other object while it sits there (a freed str's address can be
//! given to a new one), and a str never changes its text. It is per thread (no lock) and
//! borrowed once a response ([`with`]); it holds at most [`SLOTS`] keys of up to [`LONGEST`]
//! bytes of text each (a miss costs the long way); and it is only read and written with the
//! interpreter held, the only state in which a reference may be dropped at once.
//!
//! What it saves, json-large's body echoed by a `def` handler (838 keys, 18 of them distinct):
//! 1,522,946–1,539,321 → 1,448,874–1,459,932 instructions a request (callgrind, the whole
//! process, two runs before and three after), and 137 → 129 CPU-µs a request (medians of six
//! interleaved runs each, server and load generator pinned to one core each; every run after
//! was below its pair). json-medium (83 keys) and path-simple (2 keys) moved within their
//! noise.
//!
//! Tested by `tests/test_returns.py`: `test_keys_are_written_from_the_key_table_as_the_long_way_writes_them`,
//! and `test_a_freed_key_is_not_mistaken_for_a_new_one_at_its_address`, which fails when the
//! table keeps only addresses.

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::types::PyString;

use ferrule_core::json_text;
use ferrule_core::kept_by_address::{KeptByAddress, WAYS};

/// Keys kept per thread: a record has a handful of keys, and a response a few dozen distinct
/// ones.
const SLOTS: usize = 128;

/// The longest key text kept, quotes and colon included: keys are names, and a longer one
/// takes the long way each time.
const LONGEST: usize = 30;

/// A key and its text.
struct Written {
    /// Owned (see the module's notes).
    _key: Py<PyString>,
    len: u8,
    text: [u8; LONGEST],
}

/// One thread's table (see the module's notes), borrowed for a whole response by [`with`].
pub struct WrittenKeys {
    /// On the heap, made at the thread's first response: a dynamically loaded module's
    /// thread-local storage must stay small (2.5 KiB of it in place, for 64 slots, failed the import:
    /// "cannot allocate memory in static TLS block").
    slots: RefCell<KeptByAddress<Written, { SLOTS / WAYS }>>,
}

impl WrittenKeys {
    fn new() -> Self {
        WrittenKeys { slots: RefCell::new(KeptByAddress::new()) }
    }
}

thread_local! {
    static WRITTEN_KEYS: WrittenKeys = WrittenKeys::new();
}

/// Runs `write` with this thread's table: one thread-local lookup a response, not one a key.
pub fn with<R>(write: impl FnOnce(&WrittenKeys) -> R) -> R {
    let mut write = Some(write);
    match WRITTEN_KEYS.try_with(|keys| write.take().map(|write| write(keys))) {
        Ok(Some(written)) => written,
        // The thread is ending and its table is gone: a table for this response alone.
        _ => write.take().map(|write| write(&WrittenKeys::new())).expect("not yet run"),
    }
}

impl WrittenKeys {
    /// Writes `"key":` for `key`, an exact str (the caller checked), escaped as
    /// [`json_text::string_of_utf8`] escapes it.
    #[inline]
    pub fn write(&self, key: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<()> {
        // Nothing here runs Python code, so the table is never borrowed twice; should it ever
        // be, the key is written the long way.
        let Ok(mut slots) = self.slots.try_borrow_mut() else { return write_uncached(key, out).map(drop) };
        let address = key.as_ptr() as usize;
        if let Some(kept) = slots.get(address) {
            out.extend_from_slice(&kept.text[..usize::from(kept.len)]);
            return Ok(());
        }
        let written = write_uncached(key, out)?;
        // A slot given to this key lets go of the one it held, here, with the interpreter held.
        slots.keep(address, || {
            let text = out.get(written..).filter(|text| text.len() <= LONGEST)?;
            // SAFETY: the caller checked that `key` is an exact str.
            let key = unsafe { key.clone().cast_into_unchecked::<PyString>() }.unbind();
            let mut kept = Written { _key: key, len: text.len() as u8, text: [0; LONGEST] };
            kept.text[..text.len()].copy_from_slice(text);
            Some(kept)
        });
        Ok(())
    }
}

/// Writes `"key":` the long way; returns where it begins in `out`.
fn write_uncached(key: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<usize> {
    let start = out.len();
    json_text::string_of_utf8(out, super::to_json::utf8(key)?);
    out.push(b':');
    Ok(start)
}
