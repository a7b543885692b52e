//! What `sad fit` checks of a photo before it fits it, for one image and for a data set alike:
//! the largest side it reads, the memory the fit needs, and the note it prints when it scales
//! a photo down.

use anyhow::Result;
use burn::tensor::Device;
use burn_sad::device::memory_on_host;
use burn_sad::image::{ImageFile, MAX_SIDE};
use burn_sad::sad::fit::FitOptions;

use crate::checks;

/// The largest image side `sad fit` reads: [`MAX_SIDE`], or MAX_DIM where that is larger.
/// Photos with a side over MAX_DIM are scaled down to it, as the reference trainer does.
pub fn max_side(options: &FitOptions) -> usize {
    MAX_SIDE.max(options.config.effective_max_dim())
}

/// Refuses a photo whose decoding or fit would not fit in memory, from its header.
pub fn check_fit_memory(file: &ImageFile, max_dim: usize, device: &Device) -> Result<()> {
    let (width, height) = (file.width, file.height);
    if file.size_within(max_dim) != (width, height) {
        checks::check_memory(
            &format!("decoding and scaling down a {width}×{height} photo"),
            file.decode_bytes_within(max_dim),
            1,
            0,
            false,
        )?;
    }
    let (width, height) = file.size_within(max_dim);
    checks::check_memory(
        &format!("fitting a {width}×{height} image"),
        (width * height) as u64,
        checks::FIT_HOST_BYTES_PER_PIXEL,
        checks::FIT_DEVICE_BYTES_PER_PIXEL,
        memory_on_host(device),
    )
}

/// The line `sad fit` prints on stderr when it scales a photo down.
pub fn scaled_note(path: &str, from: (usize, usize), to: (usize, usize), max_dim: usize) -> String {
    format!(
        "note: {path}: {}×{} is scaled down to {}×{} (MAX_DIM = {max_dim}; --max-dim raises it)",
        from.0, from.1, to.0, to.1
    )
}
