//! Checks `sad` makes before it spends time or memory: room for the data, where the outputs go.

use std::path::Path;

use anyhow::{Result, bail};

/// Host bytes per pixel a render needs besides the device's buffers: the image read back as f32,
/// its 8-bit copy and the PNG encoder's rows.
pub const RENDER_HOST_BYTES_PER_PIXEL: u64 = 32;
/// Device bytes per pixel of a render: two candidate grids of 8 ids (the flood and the pass
/// ping-pong) and the f32 image.
pub const RENDER_DEVICE_BYTES_PER_PIXEL: u64 = 80;
/// Host bytes per pixel of `sad ssim`: both images decoded (8-bit and f32).
pub const SSIM_HOST_BYTES_PER_PIXEL: u64 = 32;
/// Device bytes per pixel of `sad ssim`: both images, the fused kernels' per-tile output and
/// MS-SSIM's downsampled copies.
pub const SSIM_DEVICE_BYTES_PER_PIXEL: u64 = 48;
/// Host bytes per pixel of `sad fit`: the photo decoded, the target copy and the final render.
pub const FIT_HOST_BYTES_PER_PIXEL: u64 = 48;
/// Device bytes per pixel of `sad fit`: target, render, two candidate grids, the image-sized
/// gradients of the optional SSIM term.
pub const FIT_DEVICE_BYTES_PER_PIXEL: u64 = 160;

/// The memory the system can still give this process (`MemAvailable` of `/proc/meminfo`), where
/// the system says.
fn available_host_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text
        .lines()
        .find(|line| line.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Fails with one line when `what` (`pixels` pixels at `host` bytes each on the host, plus
/// `device` bytes each on the device, which is host memory too on a CPU device) would not fit
/// in the memory the system has left, instead of letting the allocation abort the process.
pub fn check_memory(
    what: &str,
    pixels: u64,
    host: u64,
    device: u64,
    device_on_host: bool,
) -> Result<()> {
    let per_pixel = host + if device_on_host { device } else { 0 };
    let needed = pixels.saturating_mul(per_pixel);
    if let Some(available) = available_host_memory()
        && needed > available
    {
        bail!(
            "{what} needs about {:.1} GiB of memory but {:.1} GiB is available; use a smaller size",
            needed as f64 / f64::from(1 << 30),
            available as f64 / f64::from(1 << 30)
        );
    }
    Ok(())
}

/// Checks an output PNG path before the work: a `.png` name (the only format written), not the
/// file the work reads (`input`), in a folder that exists.
pub fn check_png_output(out: &Path, input: &Path) -> Result<()> {
    let is_png = out
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if !is_png {
        bail!(
            "{}: only PNG is written; name the output *.png",
            out.display()
        );
    }
    if let (Ok(a), Ok(b)) = (out.canonicalize(), input.canonicalize())
        && a == b
    {
        bail!("{}: the output would overwrite the input", out.display());
    }
    let folder = match out.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        bail!("{}: the folder does not exist", folder.display());
    }
    Ok(())
}
