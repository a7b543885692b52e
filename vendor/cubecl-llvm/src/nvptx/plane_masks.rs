//! Full member masks for plane operations (burn-sad patch).
//!
//! Every plane operation takes `activemask()` as its member mask (see `plane`), so that one
//! inside a branch only part of a plane takes synchronises only that part. `ptxas` cannot see
//! such a mask as constant: each shuffle and vote becomes a `VOTE.ANY`, a move to a uniform
//! register and a divergence check around the instruction itself. A kernel whose every lane
//! reaches every plane operation can register its entry point here; its masks are then the
//! full plane (`-1`), as CUDA C++'s `__shfl_sync(0xffffffff, …)`.
//!
//! Registered by entry-point name prefix before the kernel first compiles. A caller that
//! registers a kernel should also make that part of the kernel's compile-time arguments, so
//! that kernels compiled with and without it are cached under different keys.

use std::sync::Mutex;

static FULL_MASKS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Gives every plane operation of kernels whose entry point starts with `entry_prefix` the
/// full plane as its member mask (`full`), or the executing lanes again (`!full`). Applies to
/// kernels compiled afterwards. Only for kernels whose every lane reaches every plane
/// operation: a full mask inside a divergent branch is undefined behaviour.
pub fn set_full_plane_masks(entry_prefix: &str, full: bool) {
    let mut prefixes = FULL_MASKS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    prefixes.retain(|prefix| prefix != entry_prefix);
    if full {
        prefixes.push(entry_prefix.to_string());
    }
}

/// Whether `entrypoint` was registered with [`set_full_plane_masks`].
pub(crate) fn full_plane_masks(entrypoint: &str) -> bool {
    let prefixes = FULL_MASKS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    prefixes
        .iter()
        .any(|prefix| entrypoint.starts_with(prefix.as_str()))
}

/// `ir` (LLVM IR text) with every `activemask()` call replaced by the constant full mask.
pub(crate) fn with_full_masks(ir: &str) -> String {
    let mut out = String::with_capacity(ir.len());
    for line in ir.lines() {
        let defines = line.trim_start().starts_with('%');
        match line.find(" = ") {
            Some(eq) if defines && line.contains("@llvm.nvvm.activemask()") => {
                out.push_str(&line[..eq]);
                out.push_str(" = add i32 -1, 0");
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activemask_calls_become_the_full_mask() {
        let ir = "declare i32 @llvm.nvvm.activemask() #1\n\
                  define void @k() {\n  %3 = call i32 @llvm.nvvm.activemask() #2\n  \
                  %4 = tail call i32 @llvm.nvvm.activemask()\n  ret void\n}\n";
        let full = with_full_masks(ir);
        assert!(full.contains("  %3 = add i32 -1, 0\n"), "{full}");
        assert!(full.contains("  %4 = add i32 -1, 0\n"), "{full}");
        assert!(
            full.starts_with("declare i32 @llvm.nvvm.activemask() #1\n"),
            "{full}"
        );
        assert_eq!(full.matches("activemask").count(), 1, "{full}");
    }

    #[test]
    fn registration_is_by_prefix() {
        set_full_plane_masks("probe_full_masks", true);
        assert!(full_plane_masks("probe_full_masks_f32_1234"));
        assert!(!full_plane_masks("other_kernel"));
        set_full_plane_masks("probe_full_masks", false);
        assert!(!full_plane_masks("probe_full_masks_f32_1234"));
    }
}
