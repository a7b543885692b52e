//! The image being fitted, on the host.

use burn::tensor::{Device, Tensor};

use super::FitError;
use crate::image::PlanarRgb;
use crate::sad::sites::upload_contiguous;

/// An RGB image in [0, 1], planar (`[3, height, width]`), as the trainer reads it on the host,
/// and optionally the mask of the pixels the fit counts.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetImage {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Planar RGB values, channel-major.
    pub planar: Vec<f32>,
    /// The reference's `--mask`: `height × width` values in [0, 1]. The loss, the densify and
    /// prune statistics, the prune normalisation and PSNR count the pixels above 0; the
    /// gradient-weighted initialisation places no site outside them and scales the image
    /// gradient by the value. `None`: every pixel counts.
    pub mask: Option<Vec<f32>>,
}

impl TargetImage {
    /// Reads a `[1, 3, H, W]` or `[3, H, W]` image tensor back to the host.
    ///
    /// # Panics
    /// If the tensor does not have 3 channels.
    pub fn from_tensor<const D: usize>(image: Tensor<D>) -> Self {
        let dims = image.dims();
        assert!(
            D >= 3 && dims[D - 3] == 3 && dims[..D - 3].iter().all(|&d| d == 1),
            "expected one RGB image, got {dims:?}"
        );
        let (height, width) = (dims[D - 2], dims[D - 1]);
        let planar = image
            .try_to_vec_as::<f32>()
            .expect("image tensor is readable");
        Self {
            width,
            height,
            planar,
            mask: None,
        }
    }

    /// A decoded photo, without a mask.
    pub fn from_planar(pixels: PlanarRgb) -> Self {
        Self {
            width: pixels.width,
            height: pixels.height,
            planar: pixels.planar,
            mask: None,
        }
    }

    /// The image with `mask` (`height × width` values in [0, 1], see [`TargetImage::mask`]).
    pub fn with_mask(self, mask: Vec<f32>) -> Result<Self, FitError> {
        let pixels = self.width * self.height;
        if mask.len() != pixels {
            return Err(FitError::Image(format!(
                "the mask has {} values for {}×{} pixels",
                mask.len(),
                self.width,
                self.height
            )));
        }
        if mask.iter().any(|v| !(0.0..=1.0).contains(v)) {
            return Err(FitError::Image("mask values must be in [0, 1]".into()));
        }
        if !mask.iter().any(|&v| v > 0.0) {
            return Err(FitError::Image("the mask keeps no pixel".into()));
        }
        Ok(Self {
            mask: Some(mask),
            ..self
        })
    }

    /// The mask's value at pixel (`x`, `y`): 1 without a mask.
    pub fn mask_at(&self, x: usize, y: usize) -> f32 {
        self.mask
            .as_ref()
            .map_or(1.0, |mask| mask[y * self.width + x])
    }

    /// Whether the fit counts pixel (`x`, `y`): inside the mask, and not marked outside it in
    /// the pixels themselves (a negative red value, as [`TargetImage::to_tensor`] writes).
    pub fn counts(&self, x: usize, y: usize) -> bool {
        self.planar[y * self.width + x] >= 0.0 && self.mask_at(x, y) > 0.0
    }

    /// The pixels the fit counts (the reference's `maskSum`).
    pub fn counted_pixels(&self) -> usize {
        self.mask.as_ref().map_or(self.width * self.height, |mask| {
            mask.iter().filter(|&&v| v > 0.0).count()
        })
    }

    /// The image as the kernels take it, a `[3, H, W]` contiguous tensor: with a mask, the
    /// pixels outside it have red −1, which the loss, the statistics and [`masked_psnr`]
    /// skip.
    ///
    /// [`masked_psnr`]: super::masked_psnr
    pub fn to_tensor(&self, device: &Device) -> Tensor<3> {
        let mut planar = self.planar.clone();
        if let Some(mask) = &self.mask {
            for (red, &keep) in planar.iter_mut().zip(mask) {
                if keep <= 0.0 {
                    *red = -1.0;
                }
            }
        }
        upload_contiguous(planar, [3, self.height, self.width], device)
    }

    /// The pixels alone, as a `[3, H, W]` contiguous tensor (no mask marks).
    pub fn pixels_tensor(&self, device: &Device) -> Tensor<3> {
        upload_contiguous(self.planar.clone(), [3, self.height, self.width], device)
    }

    /// RGB at pixel (`x`, `y`).
    pub fn rgb(&self, x: usize, y: usize) -> [f32; 3] {
        let plane = self.width * self.height;
        let i = y * self.width + x;
        [
            self.planar[i],
            self.planar[plane + i],
            self.planar[2 * plane + i],
        ]
    }

    fn luma(&self, x: isize, y: isize) -> f32 {
        let x = x.clamp(0, self.width as isize - 1) as usize;
        let y = y.clamp(0, self.height as isize - 1) as usize;
        let [r, g, b] = self.rgb(x, y);
        0.299 * r + 0.587 * g + 0.114 * b
    }

    /// The Sobel gradient of luma at pixel (`x`, `y`), borders clamped, each kernel divided by 4.
    pub fn sobel(&self, x: usize, y: usize) -> [f32; 2] {
        let (x, y) = (x as isize, y as isize);
        let at = |dx: isize, dy: isize| self.luma(x + dx, y + dy);
        let (tl, t, tr) = (at(-1, -1), at(0, -1), at(1, -1));
        let (l, r) = (at(-1, 0), at(1, 0));
        let (bl, b, br) = (at(-1, 1), at(0, 1), at(1, 1));
        let gx = (-tl + tr - 2.0 * l + 2.0 * r - bl + br) / 4.0;
        let gy = (-tl - 2.0 * t - tr + bl + 2.0 * b + br) / 4.0;
        [gx, gy]
    }
}
