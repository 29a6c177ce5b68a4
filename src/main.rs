//! The `agent-presets` binary: everything lives in [`agent_presets::cli`].

/// Validation allocates many small, short-lived values (YAML nodes, template ASTs,
/// section maps) from several threads at once. With mimalloc, validating 1,000 presets
/// takes 2.86 instead of 3.28 billion instructions (malloc and free were 18% of them under
/// glibc), see BENCHMARKS.md.
#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

/// mimalloc as the global allocator. Every block mimalloc hands out is aligned to at
/// least a word ([`WORD`]), so a layout asking for no more takes the plain entry points;
/// only a larger alignment pays for the aligned ones (the `mimalloc` crate's wrapper
/// always took those: 4 % of the instructions of validating 1,000 presets).
struct MiMalloc;

/// mimalloc's guaranteed alignment (`MI_INTPTR_SIZE`).
const WORD: usize = std::mem::size_of::<usize>();

// SAFETY: each method forwards to mimalloc with a size and an alignment it honours: the
// plain entry points only for alignments of at most a word, which every mimalloc block
// has; `mi_free` frees blocks of both kinds.
unsafe impl std::alloc::GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as above.
        unsafe {
            if layout.align() <= WORD {
                libmimalloc_sys::mi_malloc(layout.size()).cast()
            } else {
                libmimalloc_sys::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as above.
        unsafe {
            if layout.align() <= WORD {
                libmimalloc_sys::mi_zalloc(layout.size()).cast()
            } else {
                libmimalloc_sys::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from this allocator.
        unsafe { libmimalloc_sys::mi_free(ptr.cast()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout`'s alignment.
        unsafe {
            if layout.align() <= WORD {
                libmimalloc_sys::mi_realloc(ptr.cast(), new_size).cast()
            } else {
                libmimalloc_sys::mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
            }
        }
    }
}

fn main() -> std::process::ExitCode {
    agent_presets::cli::run()
}
