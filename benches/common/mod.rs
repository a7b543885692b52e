//! Timing shared by the bench binaries.

use std::time::Instant;

use burn::tensor::Device;

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
    device.sync().expect("device sync");
    start.elapsed().as_secs_f64() * 1e3 / iters as f64
}
