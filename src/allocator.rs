//! The process's memory allocator: mimalloc, for every binary built on the
//! hub (the `cos` binary, the benchmarks, the tests). A search answer builds
//! and frees thousands of small strings; with glibc's allocator a fifth of a
//! query's time went to malloc, free and the page faults of memory handed
//! back to the system. Owns nothing else and knows no area.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_arena_eager_commit` in the mimalloc.h that the pinned
/// libmimalloc-sys builds (version 3; its Rust bindings predate the name).
#[cfg(target_os = "linux")]
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Makes the allocator commit memory as it is used. By default it commits
/// each arena whole on Linux and keeps what start-up touched: about 16 MB
/// more in an idle server's resident set. The option must be set before the
/// first allocation makes the first arena, so it is set by a static
/// constructor, which runs before Rust's runtime starts.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static COMMIT_AS_USED: extern "C" fn() = {
    extern "C" fn commit_as_used() {
        // SAFETY: sets one of mimalloc's process-wide options, a plain store.
        unsafe { libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0) }
    }
    commit_as_used
};

/// Whether arenas are committed as used (the constructor above ran).
pub fn commits_as_used() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: reads one of mimalloc's process-wide options.
        unsafe { libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn arenas_are_committed_as_used() {
        assert!(super::commits_as_used());
    }
}
