//! Reading and writing images as `[1, 3, height, width]` tensors in [0, 1]; reading and
//! decoding a file is in `decode`, scaling a photo down to a fit's largest size in `resize`.
//!
//! ```
//! use burn::tensor::{Device, Int, Tensor};
//! use burn_sad::image::{load_rgb, save_png};
//!
//! let device = Device::default();
//! let path = std::env::temp_dir().join(format!("burn-sad-image-doc-{}.png", std::process::id()));
//! let gradient = Tensor::<1, Int>::arange(0..48, &device).float().div_scalar(48.0);
//! let image = gradient.reshape([1, 3, 4, 4]);
//! save_png(image.clone(), &path)?; // 8 bits a channel, written atomically
//! let back = load_rgb(&path, &device)?;
//! assert_eq!(back.dims(), [1, 3, 4, 4]);
//! let error: f32 = (back - image).abs().max().into_scalar();
//! assert!(error <= 0.5 / 255.0 + 1e-6);
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod decode;
mod resize;

pub use decode::{ImageFile, PlanarRgb, decode_rgb};
pub use resize::{Transfer, resize_u8, scaled_size};

use std::path::Path;

use burn::tensor::{Device, Tensor};

/// The largest width or height [`load_rgb`] reads and `sad render` renders: 16 384 pixels.
pub const MAX_SIDE: usize = 16_384;

/// The largest image file [`load_rgb_within`] reads: 2 GiB, above an uncompressed 16 384²
/// RGB PNG (768 MiB) with room to spare.
pub const MAX_FILE_BYTES: u64 = 2 << 30;

/// Why an image could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The file could not be opened, decoded or encoded.
    #[error("{}{reason}", located(path))]
    Codec {
        /// The file.
        path: String,
        /// The decoder's, encoder's or file system's message.
        reason: String,
    },
    /// The file declares more pixels than the caller accepts.
    #[error(
        "{}{width}×{height} pixels is larger than the limit of {max} on a side",
        located(path)
    )]
    TooLarge {
        /// The file.
        path: String,
        /// Declared width.
        width: u64,
        /// Declared height.
        height: u64,
        /// The limit.
        max: usize,
    },
    /// The file could not be moved into place.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The tensor could not be read back from its device.
    #[error("reading the image back from the device: {0}")]
    Read(String),
    /// The tensor is not a `[1, 3, height, width]` image.
    #[error("expected a [1, 3, height, width] tensor, got {0:?}")]
    BadShape(Vec<usize>),
}

/// `"path: "`, or nothing for an error about bytes that came from no file.
fn located(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("{path}: ")
    }
}

/// Loads an image file as RGB in [0, 1] (8-bit values divided by 255), shape `[1, 3, H, W]`;
/// at most [`MAX_SIDE`] pixels on a side (see [`load_rgb_within`]).
pub fn load_rgb(path: impl AsRef<Path>, device: &Device) -> Result<Tensor<4>, ImageError> {
    load_rgb_within(path, MAX_SIDE, device)
}

/// [`load_rgb`] for images of at most `max_side` pixels on a side (see [`decode_rgb`]).
pub fn load_rgb_within(
    path: impl AsRef<Path>,
    max_side: usize,
    device: &Device,
) -> Result<Tensor<4>, ImageError> {
    Ok(ImageFile::open(path, max_side)?
        .decode()?
        .into_tensor(device))
}

/// Encodes a `[1, 3, H, W]` tensor as 8-bit PNG bytes, clamping to [0, 1] and rounding.
pub fn encode_png(image: Tensor<4>) -> Result<Vec<u8>, ImageError> {
    let dims = image.dims();
    if dims[0] != 1 || dims[1] != 3 {
        return Err(ImageError::BadShape(dims.to_vec()));
    }
    let (height, width) = (dims[2], dims[3]);
    let planar: Vec<f32> = image
        .try_to_vec_as::<f32>()
        .map_err(|error| ImageError::Read(format!("{error:?}")))?;
    let plane = width * height;
    let bytes: Vec<u8> = (0..plane)
        .flat_map(|i| (0..3).map(move |c| (c, i)))
        .map(|(c, i)| (planar[c * plane + i].clamp(0.0, 1.0) * 255.0).round() as u8)
        .collect();
    let buffer = ::image::RgbImage::from_raw(width as u32, height as u32, bytes)
        .expect("buffer matches the image size");
    let mut png = Vec::new();
    buffer
        .write_to(
            &mut std::io::Cursor::new(&mut png),
            ::image::ImageFormat::Png,
        )
        .map_err(|error| ImageError::Codec {
            path: "PNG encoder".into(),
            reason: error.to_string(),
        })?;
    Ok(png)
}

/// Writes a `[1, 3, H, W]` tensor as an 8-bit PNG, clamping to [0, 1] and rounding.
///
/// The file is written to a temporary name beside `path` and renamed into place, so an
/// interrupted write never leaves a truncated image.
pub fn save_png(image: Tensor<4>, path: impl AsRef<Path>) -> Result<(), ImageError> {
    let path = path.as_ref();
    let png = encode_png(image)?;
    write_atomically(path, &png).map_err(|source| ImageError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// The temporary name beside `path` that [`write_atomically`] writes first.
fn partial_path(path: &Path) -> std::path::PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}

/// Writes `bytes` to `path` through a temporary file beside it and a rename, so readers never
/// see a partly written file. The temporary file is removed on every failure.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_all_atomically(&[(path, bytes)])
}

/// Writes several files as a unit: every one to a temporary file beside it first, and only when
/// all are written, renames them into place. A failure before the renames leaves every old file
/// as it was and no temporary file behind.
pub fn write_all_atomically(files: &[(&Path, &[u8])]) -> std::io::Result<()> {
    let temps: Vec<std::path::PathBuf> = files.iter().map(|(path, _)| partial_path(path)).collect();
    let clean = || {
        for temp in &temps {
            let _ = std::fs::remove_file(temp);
        }
    };
    for ((_, bytes), temp) in files.iter().zip(&temps) {
        std::fs::write(temp, bytes).inspect_err(|_| clean())?;
    }
    for ((path, _), temp) in files.iter().zip(&temps) {
        std::fs::rename(temp, path).inspect_err(|_| clean())?;
    }
    Ok(())
}

/// Checks that files can be created in `dir` (creating it if needed) by creating and removing
/// an empty probe file, so a read-only destination is found before any work is spent.
pub fn check_writable_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".burn-sad-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(&probe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoder_errors_are_one_line() {
        // Found by fuzz/image_decoder: a 15-byte JPEG whose decoder message spans two lines.
        let jpeg = [
            0xFF, 0xD8, 0xFF, 0xC9, 0x00, 0xE7, 0, 0, 0, 0, 0xD8, 0xFF, 0xD9, 0, 0,
        ];
        let error = decode_rgb(&jpeg, 256).expect_err("not a decodable JPEG");
        assert!(!error.to_string().contains('\n'), "{error}");
    }

    #[test]
    fn png_chunk_names_are_not_debug_dumps() {
        // An IHDR chunk whose checksum is wrong: the decoder names the chunk in its message.
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        png.extend(300u32.to_be_bytes());
        png.extend(2u32.to_be_bytes());
        png.extend([8, 2, 0, 0, 0, 0, 0, 0, 0]);
        let message = decode_rgb(&png, 256)
            .expect_err("a bad checksum")
            .to_string();
        assert!(
            message.contains("IHDR") && !message.contains("ChunkType"),
            "{message}"
        );
    }
}
