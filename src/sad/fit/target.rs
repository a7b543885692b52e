//! The image being fitted, on the host.

use burn::tensor::{Device, Tensor};

use crate::sad::sites::upload_contiguous;

/// An RGB image in [0, 1], planar (`[3, height, width]`), as the trainer reads it on the host.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetImage {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Planar RGB values, channel-major.
    pub planar: Vec<f32>,
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
        }
    }

    /// The image as a `[3, H, W]` contiguous tensor.
    pub fn to_tensor(&self, device: &Device) -> Tensor<3> {
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
