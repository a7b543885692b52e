//! The small convolutional denoiser that the SSIM examples train.

use burn::module::Module;
use burn::nn::PaddingConfig2d;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Tensor};

/// Predicts the noise of an image and subtracts it (residual learning): three 3×3 convolutions,
/// `width` channels inside.
#[derive(Module, Debug)]
pub struct Denoiser {
    input: Conv2d,
    hidden: Conv2d,
    output: Conv2d,
}

impl Denoiser {
    /// A freshly initialised denoiser on `device`.
    pub fn new(width: usize, device: &Device) -> Self {
        let conv = |from, to| {
            Conv2dConfig::new([from, to], [3, 3])
                .with_padding(PaddingConfig2d::Same)
                .init(device)
        };
        Self {
            input: conv(3, width),
            hidden: conv(width, width),
            output: conv(width, 3),
        }
    }

    /// The denoised images, `[batch, 3, H, W]`.
    pub fn forward(&self, noisy: Tensor<4>) -> Tensor<4> {
        let x = relu(self.input.forward(noisy.clone()));
        let x = relu(self.hidden.forward(x));
        noisy - self.output.forward(x)
    }
}
