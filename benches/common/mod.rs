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
