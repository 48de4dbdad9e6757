//! The allocator: mimalloc, and giving the system back what start-up freed.

// The gateway allocates a few small buffers per request (paths, keys, bodies); mimalloc's
// thread-local free lists make that cheaper than glibc's malloc (the gateway bench measures it).
// `--cfg apistend_heap_profile` leaves the system's allocator in place, for a heap profiler that
// intercepts malloc (scripts/heap-profile.sh).
#[cfg(not(apistend_heap_profile))]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Gives the system back what start-up freed (the definitions' parse trees, about 6 MiB):
/// mimalloc purges freed memory only after a delay, on later activity of the allocator, which a
/// server idling after its start never has (BENCHMARKS.md, "Start and footprint"). The one
/// unsafe call of the crate: mimalloc offers no safe wrapper for it.
pub(crate) fn release_freed() {
    #[cfg(not(apistend_heap_profile))]
    #[allow(unsafe_code)]
    // SAFETY: `mi_collect` takes no pointer and may be called from any thread at any time.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}
