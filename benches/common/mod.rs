//! Timing shared by the bench binaries.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use burn::tensor::Device;

/// The host's milliseconds per call of the last [`time_ms`], as f64 bits.
static LAST_DISPATCH: AtomicU64 = AtomicU64::new(0);

/// Mean milliseconds per call of `step`: 3 warm-up calls, then `iters` back-to-back calls
/// between two device synchronisations.
pub fn time_ms(device: &Device, iters: usize, mut step: impl FnMut()) -> f64 {
    for _ in 0..3 {
        step();
    }
    device.sync().expect("device sync");
    let start = Instant::now();
    for _ in 0..iters {
        step();
    }
    let dispatched = start.elapsed().as_secs_f64() * 1e3 / iters as f64;
    LAST_DISPATCH.store(dispatched.to_bits(), Ordering::Relaxed);
    device.sync().expect("device sync");
    start.elapsed().as_secs_f64() * 1e3 / iters as f64
}

/// Of the last [`time_ms`]: milliseconds per call until the host had queued every call,
/// before the closing device synchronisation. Near the wall time, the host (launches and
/// dispatch) bounds the steps; well under it, the device does.
#[allow(dead_code)] // Not every bench prints it.
pub fn last_dispatch_ms() -> f64 {
    f64::from_bits(LAST_DISPATCH.load(Ordering::Relaxed))
}

/// The table cells of a baseline's two times and our ratios to them (`ours / theirs`, below 1:
/// we are faster), or dashes without a baseline row.
pub fn baseline_cells(ours: (f64, f64), baseline: Option<(f64, f64)>) -> [String; 4] {
    match baseline {
        Some((first, second)) => [
            format!("{first:.3}"),
            format!("{second:.3}"),
            format!("{:.2}", ours.0 / first),
            format!("{:.2}", ours.1 / second),
        ],
        None => ["-", "-", "-", "-"].map(String::from),
    }
}
