//! The arguments of the 2D SSIM kernels: a comptime configuration that says everything a
//! variant compiles in, and a struct of the runtime scalars, so a launch passes two values
//! instead of a row of flags and numbers.

use cubecl::prelude::*;

use super::{DepthLayout, GradTargets, InputEncoding, MOMENTS, PairWrites, SsimTerm, StripLayout};

/// The runtime scalars of a forward launch.
#[derive(CubeLaunch, CubeType, Clone, Copy, Debug)]
pub struct ForwardArgs {
    /// Plane height.
    pub height: usize,
    /// Plane width.
    pub width: usize,
    /// Pixels each side of the map loses (the radius for valid padding, else 0).
    pub crop: usize,
    /// Image planes per mask plane: the channel count for a one-channel mask, 1 for a mask per
    /// channel (read only under a window mask).
    pub planes_per_mask: usize,
    /// Weight of the term at each pixel (the op's weight over the pixel count it averages).
    pub ssim_scale: f32,
    /// Weight of |img1 − img2| at each pixel.
    pub l1_scale: f32,
    /// SSIM's luminance constant.
    pub c1: f32,
    /// SSIM's contrast constant.
    pub c2: f32,
}

/// How the two inputs lie in their buffers, and so how a kernel finds a pixel in each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InputLayout {
    /// Both contiguous: a pixel's index is its index in the (contiguous) outputs.
    #[default]
    Contiguous,
    /// Both at the plane and row strides of [`InputStrides`]' `img1` pair (both pitched alike,
    /// or windows of equally shaped images): one index for both.
    SharedStrides,
    /// Each at its own strides.
    OwnStrides,
}

/// Where the two inputs' planes and rows start in their buffers, in elements: under a strided
/// [`InputLayout`] the 2D kernels read each input at `plane · plane stride + row · row stride +
/// column`, so an image whose rows are pitched (CUDA pads each row of a 1920-wide f16 image to
/// 2048 elements) or that is a window of a larger one is read where it lies. Outputs, partial
/// maps and masks are contiguous.
#[derive(CubeLaunch, CubeType, Clone, Copy, Debug)]
pub struct InputStrides {
    /// img1's elements from one (batch, channel) plane to the next.
    pub img1_plane: usize,
    /// img1's elements from one row to the next.
    pub img1_row: usize,
    /// img2's elements from one plane to the next.
    pub img2_plane: usize,
    /// img2's elements from one row to the next.
    pub img2_row: usize,
}

/// What a 2D forward launch reads: both images (each in its own storage type), the window
/// mask (unused without one: it may be one element), the launch's scalars and where the
/// images' planes and rows lie. The kernel and the helpers its loops unroll take this one
/// value; each tensor in it is still a buffer binding of its own.
#[derive(CubeLaunch, CubeType)]
pub struct ForwardSources<F: Float, I1: Numeric, I2: Numeric> {
    /// The first image.
    pub img1: OwnedTensor<I1>,
    /// The second image.
    pub img2: OwnedTensor<I2>,
    /// The window mask's weights.
    pub mask: OwnedTensor<F>,
    /// The scalars.
    pub args: ForwardArgs,
    /// The images' plane and row strides.
    pub strides: InputStrides,
}

/// What a 2D backward launch reads: the forward's sources (with the backward's scalars), the
/// partial maps the training forward wrote and the upstream gradient.
#[derive(CubeLaunch, CubeType)]
pub struct BackwardSources<F: Float, I1: Numeric, I2: Numeric, P: Float> {
    /// The first image.
    pub img1: OwnedTensor<I1>,
    /// The second image.
    pub img2: OwnedTensor<I2>,
    /// The window mask's weights.
    pub mask: OwnedTensor<F>,
    /// The partial maps' stack, in its storage type.
    pub partials: OwnedTensor<P>,
    /// The upstream gradient, per plane or per pixel.
    pub upstream: OwnedTensor<F>,
    /// The scalars.
    pub args: BackwardArgs,
    /// The images' plane and row strides.
    pub strides: InputStrides,
}

/// What the 3D backward's depth stage reads: both volumes, the XY-blurred partial maps, the
/// upstream gradient and the launch's scalars.
#[derive(CubeLaunch, CubeType)]
pub struct DepthBackwardSources<F: Float, I1: Numeric, I2: Numeric> {
    /// The first volume.
    pub img1: OwnedTensor<I1>,
    /// The second volume.
    pub img2: OwnedTensor<I2>,
    /// The XY-blurred partial maps' stack.
    pub blurred: OwnedTensor<F>,
    /// The upstream gradient, per volume.
    pub upstream: OwnedTensor<F>,
    /// The scalars.
    pub args: DepthArgs,
}

/// The runtime scalars of a backward launch.
#[derive(CubeLaunch, CubeType, Clone, Copy, Debug)]
pub struct BackwardArgs {
    /// Plane height.
    pub height: usize,
    /// Plane width.
    pub width: usize,
    /// Stride of the per-plane upstream gradient between planes (0: one value for all).
    pub upstream_stride: usize,
    /// Image planes per mask plane (as in [`ForwardArgs`]).
    pub planes_per_mask: usize,
    /// As in the forward.
    pub ssim_scale: f32,
    /// As in the forward.
    pub l1_scale: f32,
}

/// What the forward kernel writes (besides the partial maps of a training forward).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ForwardOutput {
    /// One weighted sum of the term (plus L1) per cube, reduced on the host side of the op.
    #[default]
    TileSums,
    /// The weighted term (plus L1) at every pixel of the map region, zero elsewhere.
    Map,
    /// 3D's in-slice stage: the [`MOMENTS`] XY-blurred statistics of every pixel, nothing else.
    Moments,
}

/// The forward kernel's variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ForwardConfig {
    /// Window radius; the window has `2 · radius + 1` taps.
    pub radius: usize,
    /// `f32::to_bits` of the window's sigma.
    pub sigma_bits: u32,
    /// How a cube's units split its tile.
    pub layout: StripLayout,
    /// The averaged term.
    pub term: SsimTerm,
    /// Whether the L1 term is added.
    pub l1: bool,
    /// The partial-derivative maps a training forward stores; `None` for inference.
    pub targets: Option<GradTargets>,
    /// What the kernel writes.
    pub output: ForwardOutput,
    /// How img2 stores its values.
    pub img2_encoding: InputEncoding,
    /// How the inputs lie in their buffers.
    pub input_layout: InputLayout,
    /// Normalised convolution under a mask: every window statistic is taken over the masked
    /// pixels only (the blur of `m`, `m·x`, `m·y`, `m·(x² + y²)`, `m·xy`, divided by the blur of
    /// `m`); pixels outside the image count as unmasked zeros, as zero padding does.
    pub window_mask: bool,
    /// How the pass across stores its pixels.
    pub writes: PairWrites,
}

impl ForwardConfig {
    /// Whether the walk sums the L1 term into the tile sum as it reads the pixels (a reduced
    /// forward with the L1 term), instead of the pass across reading each pixel again.
    pub const fn walk_l1(self) -> bool {
        self.l1 && matches!(self.output, ForwardOutput::TileSums)
    }

    /// Values a pixel stores in the map (`tile_sums` as a map): one with [`ForwardOutput::Map`].
    pub const fn map_writes(self) -> usize {
        matches!(self.output, ForwardOutput::Map) as usize
    }

    /// Values a pixel stores in `partials`: the [`MOMENTS`] with [`ForwardOutput::Moments`],
    /// else the partial maps of a training forward.
    pub const fn partial_writes(self) -> usize {
        match (self.output, self.targets) {
            (ForwardOutput::Moments, _) => MOMENTS,
            (_, Some(targets)) => targets.partial_count(),
            (_, None) => 0,
        }
    }

    /// Blurred statistics per pixel: the [`MOMENTS`] μ₁, μ₂, E\[x² + y²\], E\[xy\], and under
    /// `window_mask` the blurred mask first.
    pub const fn stats(self) -> usize {
        Self::stats_with(self.window_mask)
    }

    /// [`Self::stats`] of a forward with or without a window mask: an associated function, since
    /// the launch needs it to choose the layout the config then holds.
    pub const fn stats_with(window_mask: bool) -> usize {
        MOMENTS + window_mask as usize
    }
}

/// What the backward kernel's upstream gradient is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Upstream {
    /// One gradient per plane (stride 1) or for every plane (stride 0).
    #[default]
    PerPlane,
    /// One gradient per pixel, of a forward that wrote the map.
    PerPixel,
}

/// What the backward kernel writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BackwardOutput {
    /// The tracked inputs' gradients.
    #[default]
    Gradients,
    /// 3D's in-slice stage: the XY-blurred partial maps.
    BlurredPartials,
}

/// The backward kernel's variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BackwardConfig {
    /// Window radius.
    pub radius: usize,
    /// `f32::to_bits` of the window's sigma.
    pub sigma_bits: u32,
    /// How a cube's units split its tile.
    pub layout: StripLayout,
    /// Whether the L1 term's gradient is added.
    pub l1: bool,
    /// The tracked inputs (and so the partial maps read).
    pub targets: GradTargets,
    /// What the kernel writes.
    pub output: BackwardOutput,
    /// What the upstream gradient is.
    pub upstream: Upstream,
    /// How img2 stores its values.
    pub img2_encoding: InputEncoding,
    /// How the inputs lie in their buffers.
    pub input_layout: InputLayout,
    /// The forward ran under a window mask: each gradient is multiplied by the pixel's mask
    /// value (the partial maps already hold the division by the blurred mask).
    pub window_mask: bool,
    /// How the pass across stores its pixels.
    pub writes: PairWrites,
}

impl BackwardConfig {
    /// Values a pixel stores in `grads`: the tracked inputs' gradients, or the blurred partial
    /// maps with [`BackwardOutput::BlurredPartials`].
    pub const fn grad_writes(self) -> usize {
        match self.output {
            BackwardOutput::Gradients => self.targets.grad_count(),
            BackwardOutput::BlurredPartials => self.targets.partial_count(),
        }
    }
}

/// The runtime scalars of the 3D depth stage's launches, forward and backward.
#[derive(CubeLaunch, CubeType, Clone, Copy, Debug)]
pub struct DepthArgs {
    /// Slices per volume.
    pub depth: usize,
    /// Slice height.
    pub height: usize,
    /// Slice width.
    pub width: usize,
    /// Depth chunks per volume (the grid's z is volume · chunks + chunk).
    pub chunks: usize,
    /// Voxels each side of the map loses (the forward's; the radius for valid padding, else 0).
    pub crop: usize,
    /// Stride of the per-volume upstream gradient between volumes (the backward's; 0: one
    /// value for all).
    pub upstream_stride: usize,
    /// Weight of the term at each voxel.
    pub ssim_scale: f32,
    /// SSIM's luminance constant (the forward's).
    pub c1: f32,
    /// SSIM's contrast constant (the forward's).
    pub c2: f32,
}

/// The depth forward's variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DepthForwardConfig {
    /// Window radius.
    pub radius: usize,
    /// `f32::to_bits` of the window's sigma.
    pub sigma_bits: u32,
    /// The cube's tiling.
    pub layout: DepthLayout,
    /// The averaged term.
    pub term: SsimTerm,
    /// The partial-derivative maps a training forward stores; `None` for inference.
    pub targets: Option<GradTargets>,
    /// Whether `tile_sums` is the map instead of one sum per cube.
    pub write_map: bool,
}

/// The depth backward's variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DepthBackwardConfig {
    /// Window radius.
    pub radius: usize,
    /// `f32::to_bits` of the window's sigma.
    pub sigma_bits: u32,
    /// The cube's tiling.
    pub layout: DepthLayout,
    /// The tracked inputs (and so the partial maps read).
    pub targets: GradTargets,
    /// Whether the per-voxel upstream gradient already weights the blurred maps (a map's
    /// backward), so that `upstream` is not read.
    pub map_upstream: bool,
    /// How img2 stores its values.
    pub img2_encoding: InputEncoding,
}
