//! Reading and writing images as `[1, 3, height, width]` tensors in [0, 1].

use std::path::Path;

use burn::tensor::{Device, Tensor, TensorData};

/// Why an image could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The file could not be opened, decoded or encoded.
    #[error("{path}: {source}")]
    Codec {
        /// The file.
        path: String,
        /// The decoder's or encoder's message.
        source: ::image::ImageError,
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

/// Loads an image file as RGB in [0, 1] (8-bit values divided by 255), shape `[1, 3, H, W]`.
pub fn load_rgb(path: impl AsRef<Path>, device: &Device) -> Result<Tensor<4>, ImageError> {
    let path = path.as_ref();
    let rgb = ::image::open(path)
        .map_err(|source| ImageError::Codec {
            path: path.display().to_string(),
            source,
        })?
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

/// Writes a `[1, 3, H, W]` tensor as an 8-bit PNG, clamping to [0, 1] and rounding.
///
/// The file is written to a temporary name beside `path` and renamed into place, so an
/// interrupted write never leaves a truncated image.
pub fn save_png(image: Tensor<4>, path: impl AsRef<Path>) -> Result<(), ImageError> {
    let path = path.as_ref();
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
    let temp = path.with_extension("png.partial");
    let codec = |source| ImageError::Codec {
        path: path.display().to_string(),
        source,
    };
    buffer
        .save_with_format(&temp, ::image::ImageFormat::Png)
        .map_err(codec)?;
    std::fs::rename(&temp, path).map_err(|source| ImageError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Writes `bytes` to `path` through a temporary file beside it and a rename, so readers never
/// see a partly written file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    let temp = path.with_file_name(name);
    std::fs::write(&temp, bytes)?;
    std::fs::rename(&temp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}
