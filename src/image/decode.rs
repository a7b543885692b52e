//! Reading an image file once and decoding it: the header and its limits first, then the
//! pixels.

use std::path::Path;

use burn::tensor::{Device, Tensor, TensorData};

use super::resize::{Transfer, resize_u8, scaled_size};
use super::{ImageError, MAX_FILE_BYTES};

/// An image file read into memory once, its size known from its header and within the
/// caller's limit, not yet decoded: a caller can check what decoding and uploading it will cost
/// (`width × height`) before spending it.
#[derive(Clone, Debug)]
pub struct ImageFile {
    name: String,
    bytes: Vec<u8>,
    /// Declared width in pixels.
    pub width: usize,
    /// Declared height in pixels.
    pub height: usize,
}

impl ImageFile {
    /// Reads a PNG or JPEG file and its header. Refused: a directory, a file larger than
    /// [`MAX_FILE_BYTES`], and what [`decode_rgb`] refuses before decoding (another format, a
    /// truncated JPEG, a side over `max_side`).
    pub fn open(path: impl AsRef<Path>, max_side: usize) -> Result<Self, ImageError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        if path.is_dir() {
            return Err(ImageError::Codec {
                path: name,
                reason: "is a directory, not an image".into(),
            });
        }
        let io = |error: std::io::Error| ImageError::Codec {
            path: name.clone(),
            reason: error.to_string(),
        };
        // Reading allocates the whole file: refuse one larger than any image we accept could be.
        let size = std::fs::metadata(path).map_err(io)?.len();
        if size > MAX_FILE_BYTES {
            return Err(ImageError::Codec {
                path: name,
                reason: format!(
                    "{:.1} GiB is larger than an image file can be here ({} GiB at most)",
                    size as f64 / f64::from(1 << 30),
                    MAX_FILE_BYTES >> 30
                ),
            });
        }
        let bytes = std::fs::read(path).map_err(io)?;
        let (width, height) = header(&bytes, max_side).map_err(|error| error.for_file(&name))?;
        Ok(Self {
            name,
            bytes,
            width,
            height,
        })
    }

    /// The pixels.
    pub fn decode(self) -> Result<PlanarRgb, ImageError> {
        pixels(&self.bytes).map_err(|error| error.for_file(&self.name))
    }

    /// The size [`ImageFile::decode_within`] gives for `max_dim`: the declared one, or the
    /// scaled-down one where a side is over `max_dim`.
    pub fn size_within(&self, max_dim: usize) -> (usize, usize) {
        scaled_size(self.width, self.height, max_dim).unwrap_or((self.width, self.height))
    }

    /// The pixels, scaled down as the reference trainer loads a photo when a side is over
    /// `max_dim`: to `round(W·s) × round(H·s)` with `s = max_dim / max(W, H)`, filtered in
    /// linear light (see `resize`) and rounded to 8 bits again.
    pub fn decode_within(self, max_dim: usize) -> Result<PlanarRgb, ImageError> {
        Ok(self.decode_with_alpha_within(max_dim, false)?.0)
    }

    /// [`ImageFile::decode_within`], and with `alpha` the file's alpha channel at the same size
    /// (scaled as values, not light), values / 255, from the same decode; `None` for a file
    /// without one (or without `alpha`).
    pub fn decode_with_alpha_within(
        self,
        max_dim: usize,
        alpha: bool,
    ) -> Result<(PlanarRgb, Option<Vec<f32>>), ImageError> {
        let image = reader(&self.bytes)
            .and_then(|reader| reader.decode().map_err(|error| codec(error.to_string())))
            .map_err(|error| error.for_file(&self.name))?;
        let size = (image.width() as usize, image.height() as usize);
        let out_size = scaled_size(size.0, size.1, max_dim).unwrap_or(size);
        let alpha = (alpha && image.color().has_alpha()).then(|| {
            let alpha: Vec<u8> = image.to_rgba8().pixels().map(|pixel| pixel[3]).collect();
            unit_values(alpha, size, out_size)
        });
        let rgb = image.to_rgb8().into_raw();
        let rgb = match out_size == size {
            true => rgb,
            false => resize_u8(&rgb, 3, size, out_size, Transfer::Srgb),
        };
        Ok((planar(&rgb, out_size.0, out_size.1), alpha))
    }

    /// The file as a mask for a `width × height` photo, as the reference reads `--mask`: one
    /// channel (stb's luma of RGB, `(77·R + 150·G + 29·B) >> 8`; a grey image as it is), scaled
    /// to the photo's size as values where it differs, values / 255.
    pub fn decode_mask(self, (width, height): (usize, usize)) -> Result<Vec<f32>, ImageError> {
        let rgb = rgb8(&self.bytes).map_err(|error| error.for_file(&self.name))?;
        let luma: Vec<u8> = rgb
            .pixels()
            .map(|p| {
                ((77 * u32::from(p[0]) + 150 * u32::from(p[1]) + 29 * u32::from(p[2])) >> 8) as u8
            })
            .collect();
        Ok(unit_values(
            luma,
            (self.width, self.height),
            (width, height),
        ))
    }

    /// Bytes of host memory [`ImageFile::decode_within`] holds at its peak, at most: the file's
    /// pixels as decoded (up to 8 bytes each, RGBA at 16 bits) and as 8-bit RGB, and, when it
    /// scales, the rows narrowed in linear light (12 bytes a pixel).
    pub fn decode_bytes_within(&self, max_dim: usize) -> u64 {
        let pixels = (self.width * self.height) as u64;
        let narrowed = match scaled_size(self.width, self.height, max_dim) {
            Some((out_width, _)) => (out_width * self.height) as u64 * 12,
            None => pixels * 12,
        };
        pixels * (8 + 3) + narrowed
    }
}

/// One channel of 8-bit values (`size`) at `out_size` (scaled as values, where the sizes
/// differ), each / 255: a mask or an alpha channel for its photo.
fn unit_values(values: Vec<u8>, size: (usize, usize), out_size: (usize, usize)) -> Vec<f32> {
    let values = match size == out_size {
        true => values,
        false => resize_u8(&values, 1, size, out_size, Transfer::Linear),
    };
    values.iter().map(|&v| f32::from(v) / 255.0).collect()
}

/// A decoded image: RGB planes in [0, 1], `[3, height, width]` row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanarRgb {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// R, G and B planes, each `height × width`, values / 255.
    pub planar: Vec<f32>,
}

impl PlanarRgb {
    /// The image as a `[1, 3, height, width]` tensor on `device`.
    pub fn into_tensor(self, device: &Device) -> Tensor<4> {
        Tensor::from_data(
            TensorData::new(self.planar, [1, 3, self.height, self.width]),
            device,
        )
    }
}

/// Decodes a PNG or JPEG file's bytes (the format from the content, not a name) to RGB planes,
/// for images of at most `max_side` pixels on a side. The size is read from the header before
/// anything is decoded, so a small file that declares a huge image (a compressed PNG of zero
/// rows) is an error, not an allocation; a JPEG without its end-of-image marker (a truncated
/// download) is an error too, where decoders would fill the missing rows with grey.
pub fn decode_rgb(bytes: &[u8], max_side: usize) -> Result<PlanarRgb, ImageError> {
    header(bytes, max_side)?;
    pixels(bytes)
}

/// A reader of `bytes` with the format guessed from the content.
fn reader(bytes: &[u8]) -> Result<::image::ImageReader<std::io::Cursor<&[u8]>>, ImageError> {
    ::image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|error| codec(error.to_string()))
}

/// A decoder's message as an error about bytes of no file yet ([`ImageError::for_file`] names
/// it).
fn codec(reason: String) -> ImageError {
    ImageError::Codec {
        path: String::new(),
        reason: readable(&reason),
    }
}

/// The checks of [`decode_rgb`] that read no pixel: the format, a JPEG's end marker, and the
/// declared size against `max_side`. Returns (width, height).
fn header(bytes: &[u8], max_side: usize) -> Result<(usize, usize), ImageError> {
    match reader(bytes)?.format() {
        Some(::image::ImageFormat::Png) => {}
        Some(::image::ImageFormat::Jpeg) => {
            let end = bytes
                .iter()
                .rposition(|&b| b != 0 && !b.is_ascii_whitespace());
            if end.is_none_or(|end| end < 1 || bytes[end - 1..=end] != [0xFF, 0xD9]) {
                return Err(codec(
                    "the JPEG is truncated (no end-of-image marker)".into(),
                ));
            }
        }
        _ => return Err(codec("not a PNG or JPEG file".into())),
    }
    let (width, height) = reader(bytes)?
        .into_dimensions()
        .map_err(|error| codec(error.to_string()))?;
    if width as usize > max_side || height as usize > max_side {
        return Err(ImageError::TooLarge {
            path: String::new(),
            width: width.into(),
            height: height.into(),
            max: max_side,
        });
    }
    Ok((width as usize, height as usize))
}

/// The pixels of bytes [`header`] accepted, as RGB planes.
fn pixels(bytes: &[u8]) -> Result<PlanarRgb, ImageError> {
    let rgb = rgb8(bytes)?;
    Ok(planar(
        rgb.as_raw(),
        rgb.width() as usize,
        rgb.height() as usize,
    ))
}

/// The pixels of bytes [`header`] accepted, as 8-bit RGB (alpha dropped, grey expanded, 16 bits
/// reduced to 8, as the reference loads them).
fn rgb8(bytes: &[u8]) -> Result<::image::RgbImage, ImageError> {
    Ok(reader(bytes)?
        .decode()
        .map_err(|error| codec(error.to_string()))?
        .to_rgb8())
}

/// Interleaved 8-bit RGB as planes of values / 255.
fn planar(rgb: &[u8], width: usize, height: usize) -> PlanarRgb {
    let plane = width * height;
    let mut planar = vec![0f32; 3 * plane];
    for (i, pixel) in rgb.chunks_exact(3).enumerate() {
        for c in 0..3 {
            planar[c * plane + i] = f32::from(pixel[c]) / 255.0;
        }
    }
    PlanarRgb {
        width,
        height,
        planar,
    }
}

/// A decoder's message as one readable line: its lines joined (the fuzzer found a JPEG message
/// of two), and the PNG decoder's `ChunkType { type: IHDR, critical: true, … }` as `IHDR`.
fn readable(message: &str) -> String {
    let mut text = message.split_whitespace().collect::<Vec<_>>().join(" ");
    const CHUNK: &str = "ChunkType { type: ";
    while let Some(start) = text.find(CHUNK) {
        let rest = &text[start + CHUNK.len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let end = rest
            .find('}')
            .map_or(text.len(), |i| start + CHUNK.len() + i + 1);
        text.replace_range(start..end, &name);
    }
    text
}

impl ImageError {
    /// The error with `path` as the file it names.
    fn for_file(self, path: &str) -> Self {
        match self {
            Self::Codec { reason, .. } => Self::Codec {
                path: path.into(),
                reason,
            },
            Self::TooLarge {
                width, height, max, ..
            } => Self::TooLarge {
                path: path.into(),
                width,
                height,
                max,
            },
            other => other,
        }
    }
}
