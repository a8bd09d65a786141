//! The allocator of every Ferrule artifact (each language's extension, the benchmark servers):
//! mimalloc, asked through its plain `mi_malloc` whenever a plain allocation already has the
//! alignment Rust asks for.
//!
//! The `mimalloc` crate's allocator passes every Rust allocation to `mi_malloc_aligned`, even
//! one that only needs 8 bytes of alignment. mimalloc 3's aligned call is quick only when the
//! size class's current page has a free block that happens to be aligned. Otherwise it takes
//! a generic path, and for a block above 1 KiB, or one whose size class is not a power of
//! two, that path over-allocates and offsets the pointer. Those are the response buffers and
//! body bytes of every request. Python sync, json-medium, callgrind: 27.6 aligned calls a
//! request cost 3,295 instructions, 120 each (`mi_malloc_aligned` and its generic paths), and
//! 1,796 through `mi_malloc`.
//!
//! Whole requests, instructions (callgrind, one keep-alive connection, after 500 of warm-up;
//! the plain axum server is the benchmark harness's, which uses this allocator too):
//!
//! | | before | after |
//! |---|---:|---:|
//! | Python sync, json-small | 47,355 | 46,147 (−2.6%) |
//! | Python sync, json-medium | 170,017 | 168,743 (−0.7%) |
//! | Rust, json-small | 31,453 | 30,524 (−3.0%) |
//! | plain axum, json-small | 29,090 | 28,245 (−2.9%) |
//!
//! mimalloc's blocks are 8-byte aligned, and those of 16 bytes or more 16-byte aligned (its
//! size classes are multiples of 16 from 16 bytes on; `alloc.c` asserts it of every block it
//! hands out). So a layout whose alignment is at most 8, or 16 with a size of at least 16, is
//! served by `mi_malloc`; std's `System` allocator chooses `malloc` by the same rule. Larger
//! alignments (tokio's cache-padded cells, 128) still go through the aligned call.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// `#[global_allocator] static ALLOCATOR: ferrule_core::Allocator = ferrule_core::Allocator;`
pub struct Allocator;

/// The alignment every mimalloc block of at least this size has.
const PLAIN_ALIGNMENT: usize = 16;
/// The alignment every mimalloc block has.
const WORD_ALIGNMENT: usize = 8;

/// Whether `mi_malloc(size)` returns memory aligned to `align`.
#[inline(always)]
fn plain_suffices(size: usize, align: usize) -> bool {
    align <= WORD_ALIGNMENT || (align <= PLAIN_ALIGNMENT && size >= PLAIN_ALIGNMENT)
}

// SAFETY: each method hands the layout's request to mimalloc, whose calls return null or a
// block of at least `size` bytes aligned as asked (`plain_suffices`), and frees only blocks it
// made; `mi_free` and `mi_realloc` take blocks from either call.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if plain_suffices(layout.size(), layout.align()) {
            unsafe { mi::mi_malloc(layout.size()) as *mut u8 }
        } else {
            unsafe { mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if plain_suffices(layout.size(), layout.align()) {
            unsafe { mi::mi_zalloc(layout.size()) as *mut u8 }
        } else {
            unsafe { mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if plain_suffices(new_size, layout.align()) {
            unsafe { mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8 }
        } else {
            unsafe { mi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8 }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every size from 1 to 4 KiB and a few above, at each alignment up to a page: each block
    /// is aligned as asked, holds its size, and survives growing and shrinking.
    #[test]
    fn every_block_is_aligned_as_its_layout_asks_through_alloc_zeroed_and_realloc() {
        let sizes = (1..=4096).chain([8191, 8192, 65_537, 1 << 20]);
        for size in sizes {
            for align in [1, 2, 4, 8, 16, 32, 64, 128, 4096] {
                let layout = Layout::from_size_align(size, align).unwrap();
                unsafe {
                    let block = Allocator.alloc(layout);
                    assert!(!block.is_null());
                    assert_eq!(block as usize % align, 0, "size {size}, align {align}");
                    block.write_bytes(0xA5, size);
                    Allocator.dealloc(block, layout);

                    let zeroed = Allocator.alloc_zeroed(layout);
                    assert_eq!(zeroed as usize % align, 0, "zeroed: size {size}, align {align}");
                    assert!(std::slice::from_raw_parts(zeroed, size).iter().all(|&b| b == 0));
                    zeroed.write(7);
                    let grown_size = size * 2 + 3;
                    let grown = Allocator.realloc(zeroed, layout, grown_size);
                    assert_eq!(grown as usize % align, 0, "grown: size {size}, align {align}");
                    assert_eq!(grown.read(), 7, "growing kept the first byte");
                    let shrunk_size = (size / 3).max(1);
                    let shrunk = Allocator.realloc(grown, Layout::from_size_align(grown_size, align).unwrap(), shrunk_size);
                    assert_eq!(shrunk as usize % align, 0, "shrunk: size {size}, align {align}");
                    assert_eq!(shrunk.read(), 7, "shrinking kept the first byte");
                    Allocator.dealloc(shrunk, Layout::from_size_align(shrunk_size, align).unwrap());
                }
            }
        }
    }

    /// The rule itself, at its edges: a 16-aligned layout smaller than 16 bytes may land in an
    /// 8-byte block, and 32 is never promised by a plain block.
    #[test]
    fn the_plain_call_serves_word_alignment_always_and_sixteen_from_sixteen_bytes() {
        assert!(plain_suffices(1, 1));
        assert!(plain_suffices(3, 8));
        assert!(plain_suffices(24, 8));
        assert!(plain_suffices(1536, 8));
        assert!(plain_suffices(16, 16));
        assert!(plain_suffices(40, 16));
        assert!(!plain_suffices(8, 16));
        assert!(!plain_suffices(64, 32));
        assert!(!plain_suffices(1024, 128));
    }
}
