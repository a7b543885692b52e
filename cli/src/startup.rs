//! Where a run's time goes before its timed work starts, for the `Start-up:` lines.
//!
//! The reference's timings leave out its process start, CUDA context and module loading; ours
//! do too, and these lines say what that left-out part costs, so a user's `time sad …` adds up.

use std::sync::OnceLock;
use std::time::Instant;

/// When `main` began.
static STARTED: OnceLock<Instant> = OnceLock::new();
/// When the device had been selected and had run its first kernel.
static DEVICE_READY: OnceLock<Instant> = OnceLock::new();

/// Records the process start; call first thing in `main`.
pub fn mark_start() {
    STARTED.get_or_init(Instant::now);
}

/// Records that the device is ready (after [`mark_start`]).
pub fn mark_device_ready() {
    DEVICE_READY.get_or_init(Instant::now);
}

/// Seconds since [`mark_start`] (0 when it was never called).
pub fn since_start() -> f64 {
    STARTED
        .get()
        .map_or(0.0, |start| start.elapsed().as_secs_f64())
}

/// Seconds from [`mark_start`] to [`mark_device_ready`]: process set-up, the kernel cache and
/// the device's initialisation (0 when either was never recorded).
pub fn device_seconds() -> f64 {
    match (STARTED.get(), DEVICE_READY.get()) {
        (Some(start), Some(ready)) => ready.duration_since(*start).as_secs_f64(),
        _ => 0.0,
    }
}
