//! Reading and writing images as `[1, 3, height, width]` tensors in [0, 1].

use std::path::Path;

use burn::tensor::{Device, Tensor, TensorData};

/// The largest width or height [`load_rgb`] reads and `sad render` renders: 16 384 pixels.
pub const MAX_SIDE: usize = 16_384;

/// Why an image could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The file could not be opened, decoded or encoded.
    #[error("{path}: {reason}")]
    Codec {
        /// The file.
        path: String,
        /// The decoder's, encoder's or file system's message.
        reason: String,
    },
    /// The file declares more pixels than the caller accepts.
    #[error("{path}: {width}×{height} pixels is larger than the limit of {max} on a side")]
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

/// Loads an image file as RGB in [0, 1] (8-bit values divided by 255), shape `[1, 3, H, W]`;
/// at most [`MAX_SIDE`] pixels on a side (see [`load_rgb_within`]).
pub fn load_rgb(path: impl AsRef<Path>, device: &Device) -> Result<Tensor<4>, ImageError> {
    load_rgb_within(path, MAX_SIDE, device)
}

/// [`load_rgb`] for images of at most `max_side` pixels on a side. The size is read from the
/// file's header before anything is decoded, so a small file that declares a huge image (a
/// compressed PNG of zero rows) is an error, not an allocation. The format comes from the
/// file's content, not its name.
pub fn load_rgb_within(
    path: impl AsRef<Path>,
    max_side: usize,
    device: &Device,
) -> Result<Tensor<4>, ImageError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let codec = |reason: String| ImageError::Codec {
        path: name.clone(),
        reason,
    };
    if path.is_dir() {
        return Err(codec("is a directory, not an image".into()));
    }
    let open = || -> Result<::image::ImageReader<std::io::BufReader<std::fs::File>>, ImageError> {
        ::image::ImageReader::open(path)
            .and_then(|reader| reader.with_guessed_format())
            .map_err(|error| codec(error.to_string()))
    };
    let reader = open()?;
    if reader.format().is_none() {
        return Err(codec("not a PNG or JPEG file".into()));
    }
    let (width, height) = reader
        .into_dimensions()
        .map_err(|error| codec(error.to_string()))?;
    if width as usize > max_side || height as usize > max_side {
        return Err(ImageError::TooLarge {
            path: name,
            width: width.into(),
            height: height.into(),
            max: max_side,
        });
    }
    let rgb = open()?
        .decode()
        .map_err(|error| codec(error.to_string()))?
        .to_rgb8();
    let (width, height) = (rgb.width() as usize, rgb.height() as usize);
    let mut planar = vec![0f32; 3 * width * height];
    for (i, pixel) in rgb.pixels().enumerate() {
        for c in 0..3 {
            planar[c * width * height + i] = f32::from(pixel[c]) / 255.0;
        }
    }
    Ok(Tensor::from_data(
        TensorData::new(planar, [1, 3, height, width]),
        device,
    ))
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
