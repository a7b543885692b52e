//! Occupancy hints (burn-sad patch): the least number of cubes per streaming multiprocessor a
//! kernel asks the compiler to make room for (`.minnctapersm` in the PTX, through LLVM's
//! `nvvm.minctasm` function attribute), which caps its registers per unit at
//! 65 536 / (cubes · units per cube).
//!
//! Registered by entry-point name prefix before the kernel first compiles; kernels without a
//! hint compile as before. A caller that registers a hint should also make it part of the
//! kernel's compile-time arguments, so that kernels compiled with and without it are cached
//! under different keys.

use std::sync::Mutex;

static HINTS: Mutex<Vec<(String, u32)>> = Mutex::new(Vec::new());

/// Asks for at least `cubes` resident cubes per multiprocessor for every kernel whose entry
/// point starts with `entry_prefix`; 0 removes the hint. Applies to kernels compiled afterwards.
pub fn set_min_cubes_per_sm(entry_prefix: &str, cubes: u32) {
    let mut hints = HINTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    hints.retain(|(prefix, _)| prefix != entry_prefix);
    if cubes > 0 {
        hints.push((entry_prefix.to_string(), cubes));
    }
}

/// The hint registered for `entrypoint`, if any (the longest matching prefix).
pub(crate) fn min_cubes_per_sm(entrypoint: &str) -> Option<u32> {
    let hints = HINTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    hints
        .iter()
        .filter(|(prefix, _)| entrypoint.starts_with(prefix.as_str()))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|&(_, cubes)| cubes)
}
