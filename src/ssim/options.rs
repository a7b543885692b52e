//! User-facing options of the SSIM ops.

use burn_sad_kernels::ssim::{DEFAULT_RADIUS, DEFAULT_SIGMA};

/// How the SSIM map treats the image border.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Padding {
    /// Zero padding; the map has the input's size (fused-ssim `"same"`, graphdeco 3DGS).
    #[default]
    Same,
    /// Only pixels whose whole window lies inside the image: the map loses `window / 2` pixels
    /// per side (fused-ssim `"valid"`, pytorch-msssim).
    Valid,
}

impl std::str::FromStr for Padding {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "same" => Ok(Self::Same),
            "valid" => Ok(Self::Valid),
            other => Err(format!(
                "unknown padding `{other}`: expected `same` or `valid`"
            )),
        }
    }
}

/// The most output rows a walker of the 2D kernels may take.
const MAX_ROWS: usize = 1024;

/// The most walkers per column: 16 of them make a cube of 1024 units, what every runtime
/// allows.
const MAX_STRIPS: usize = 16;

/// How the 2D SSIM kernels split an output tile among a cube's units (the 3D ones run them
/// over every slice). A cube covers `64 − 2·radius` output columns and `rows · strips` rows of
/// one plane: each of its 64 columns is walked by `strips` units, one under the other, each
/// blurring `rows` output rows vertically in a register ring (rounded up to a whole number of
/// window heights, `2·radius + 1` rows); the cube then blurs them horizontally. More rows per
/// walker read fewer apron rows per output row; more strips give the multiprocessor more units
/// per cube. The strips halve (never below 1) until the cube's shared buffer fits the device's
/// shared memory. A layout changes speed only: every layout computes the same values.
///
/// The default was measured fastest on an H100 (`benches/RESULTS.md`); `benches/fused_ssim.rs`
/// takes `--layout` to time others on a new GPU.
///
/// ```
/// use burn_sad::ssim::{SsimLayout, SsimOptions};
///
/// let layout = SsimLayout { forward_rows: 11, ..SsimLayout::DEFAULT };
/// let options = SsimOptions::default().with_layout(layout);
/// assert_eq!(options.layout.forward_rows, 11);
/// assert!(layout.is_valid());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SsimLayout {
    /// Output rows per walker of the forward kernel, 1 to 1024.
    pub forward_rows: usize,
    /// Walkers per column of a forward cube: a power of two, 1 to 16.
    pub forward_strips: usize,
    /// Output rows per walker of the backward kernel, 1 to 1024.
    pub backward_rows: usize,
    /// Walkers per column of a backward cube: a power of two, 1 to 16.
    pub backward_strips: usize,
}

impl SsimLayout {
    /// The default: one 66-row walker per column in the forward (six heights of the default
    /// window), two 11-row walkers per column in the backward.
    pub const DEFAULT: Self = Self {
        forward_rows: 66,
        forward_strips: 1,
        backward_rows: 11,
        backward_strips: 2,
    };

    /// Whether every field is in its range.
    pub fn is_valid(&self) -> bool {
        let rows = |rows: usize| (1..=MAX_ROWS).contains(&rows);
        let strips = |strips: usize| strips.is_power_of_two() && strips <= MAX_STRIPS;
        rows(self.forward_rows)
            && rows(self.backward_rows)
            && strips(self.forward_strips)
            && strips(self.backward_strips)
    }
}

impl Default for SsimLayout {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl std::str::FromStr for SsimLayout {
    type Err = String;

    /// `forward_rows,forward_strips,backward_rows,backward_strips`, for example `66,1,11,2`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let fields: Vec<usize> = s
            .split(',')
            .map(|field| field.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("bad SSIM layout `{s}`: expected four whole numbers"))?;
        let [forward_rows, forward_strips, backward_rows, backward_strips] = fields[..] else {
            return Err(format!("bad SSIM layout `{s}`: expected four numbers"));
        };
        let layout = Self {
            forward_rows,
            forward_strips,
            backward_rows,
            backward_strips,
        };
        if layout.is_valid() {
            Ok(layout)
        } else {
            Err(format!(
                "bad SSIM layout `{s}`: rows must be 1 to {MAX_ROWS}, strips a power of two \
                 up to {MAX_STRIPS}"
            ))
        }
    }
}

/// What a training forward keeps for its backward.
///
/// ```
/// use burn_sad::ssim::{SsimMemory, SsimOptions};
///
/// let lean = SsimOptions::default().with_memory(SsimMemory::Recompute);
/// assert_eq!(lean.memory, SsimMemory::Recompute);
/// assert_eq!("store-half".parse::<SsimMemory>(), Ok(SsimMemory::StoreHalf));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SsimMemory {
    /// The forward stores its partial-derivative maps (three or four f32 maps of the images'
    /// size) until the backward runs; the backward only blurs them.
    #[default]
    Store,
    /// The forward stores nothing but its inputs, which the graph holds anyway; the backward runs
    /// the training forward again to rebuild the maps, uses them and frees them. It saves those
    /// maps for as long as the rest of the graph lives, for one more forward per step.
    Recompute,
    /// As [`Store`](Self::Store), with the maps stored as f16 and read back into f32: half the
    /// memory they hold and half the bytes the backward reads, for less accurate gradients.
    /// The value is computed in f32 as with `Store`, bit for bit. The gradient at a pixel is a
    /// difference of blurred maps that nearly cancel (the mean's derivative against the
    /// variance's times the pixel), so each map's f16 rounding (2⁻¹¹ of its values) grows in
    /// it: on the photos of the tests, the largest error is under 1 % of the largest gradient
    /// magnitude (0.7 % on `coffee`), and single small gradients can be 10 % off; Adam-style
    /// training takes that as noise, a gradient check does not. Inputs of another data range
    /// are divided by it first (one elementwise pass), so the maps stay in f16's range; a
    /// `k2` under 0.006 is refused
    /// ([`SsimError::HalfMapsOverflow`](super::SsimError::HalfMapsOverflow)). Needs a device
    /// that stores f16 (an op on one that doesn't is refused with
    /// [`SsimError::UnsupportedDevice`](super::SsimError::UnsupportedDevice)); the reference
    /// ops ignore it.
    StoreHalf,
}

impl std::str::FromStr for SsimMemory {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "store" => Ok(Self::Store),
            "recompute" => Ok(Self::Recompute),
            "store-half" => Ok(Self::StoreHalf),
            other => Err(format!(
                "unknown SSIM memory mode `{other}`: expected `store`, `store-half` or `recompute`"
            )),
        }
    }
}

/// How [`fused_ssim_masked`](super::fused_ssim_masked) uses its mask.
///
/// - [`MaskMode::Weights`] computes SSIM on the whole images and weights the map pixel by
///   pixel: a window that straddles the mask's edge still sees the pixels outside it. Cheap (the
///   unmasked kernels, then a weighted mean), and right when the pixels outside the mask are
///   valid data that should simply not count, as with a 3DGS ground truth's alpha.
/// - [`MaskMode::Window`] is normalised convolution: every window statistic (means, variances,
///   covariance) is a weighted mean over the window's masked pixels only, the weights
///   renormalised (the blur of `m·x` over the blur of `m`), and the map is then averaged with
///   the mask's weights. Pixels outside the mask never enter a statistic, so garbage behind a
///   hole (an occluder, a missing region, an undefined depth) cannot leak into the SSIM of the
///   pixels around it. The image's border still counts as zero padding (the mask is taken as
///   1 outside the image), so a mask of ones gives the unmasked op. One more blurred statistic
///   and a division per pixel; 2D only.
///
/// ```
/// use burn_sad::ssim::{MaskMode, SsimOptions};
///
/// let options = SsimOptions::default().with_mask_mode(MaskMode::Window);
/// assert_eq!(options.mask_mode, MaskMode::Window);
/// assert_eq!("window".parse::<MaskMode>(), Ok(MaskMode::Window));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MaskMode {
    /// The unmasked SSIM map, weighted pixel by pixel.
    #[default]
    Weights,
    /// Every window statistic over the masked pixels only (normalised convolution).
    Window,
}

impl std::str::FromStr for MaskMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "weights" => Ok(Self::Weights),
            "window" => Ok(Self::Window),
            other => Err(format!(
                "unknown mask mode `{other}`: expected `weights` or `window`"
            )),
        }
    }
}

/// SSIM's stabilising constants for data of range `L` (the difference between the largest and
/// the smallest value a pixel can take): C1 = (k1·L)², C2 = (k2·L)², as pytorch-msssim's
/// `data_range` and `K`, and torchmetrics' `data_range`, `k1`, `k2`. The default is data in
/// [0, 1] with the paper's k1 = 0.01, k2 = 0.03 (C1 = 1e-4, C2 = 9e-4): for 8-bit values use a
/// range of 255, for a diffusion model's [−1, 1] a range of 2.
///
/// ```
/// use burn_sad::ssim::SsimConstants;
///
/// let eight_bit = SsimConstants::DEFAULT.with_data_range(255.0);
/// assert!((eight_bit.c1() - 6.5025).abs() < 1e-5);
/// assert_eq!(SsimConstants::DEFAULT.c2(), 9e-4);
/// assert!(SsimConstants::DEFAULT.with_constants(0.0, 0.03).validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SsimConstants {
    /// The data range `L`: positive and finite.
    pub data_range: f32,
    /// The luminance constant's factor, in (0, 1).
    pub k1: f32,
    /// The contrast constant's factor, in (0, 1).
    pub k2: f32,
}

impl SsimConstants {
    /// Data in [0, 1], k1 = 0.01, k2 = 0.03.
    pub const DEFAULT: Self = Self {
        data_range: 1.0,
        k1: 0.01,
        k2: 0.03,
    };

    /// The same factors for data of range `data_range`.
    pub fn with_data_range(mut self, data_range: f32) -> Self {
        self.data_range = data_range;
        self
    }

    /// The same data range with other factors.
    pub fn with_constants(mut self, k1: f32, k2: f32) -> Self {
        self.k1 = k1;
        self.k2 = k2;
        self
    }

    /// C1 = (k1·L)², computed in f64 and rounded once.
    pub fn c1(&self) -> f32 {
        (self.k1 as f64 * self.data_range as f64).powi(2) as f32
    }

    /// C2 = (k2·L)², computed in f64 and rounded once.
    pub fn c2(&self) -> f32 {
        (self.k2 as f64 * self.data_range as f64).powi(2) as f32
    }

    /// Checks the ranges: a data range that is not positive and finite, or a factor outside
    /// (0, 1), or constants that are not positive normal f32 numbers, is an
    /// [`SsimError`](super::SsimError).
    pub fn validate(&self) -> Result<(), super::SsimError> {
        if !(self.data_range.is_finite() && self.data_range > 0.0) {
            return Err(super::SsimError::BadDataRange(self.data_range));
        }
        let factor = |k: f32| k > 0.0 && k < 1.0;
        if !(factor(self.k1) && factor(self.k2)) {
            return Err(super::SsimError::BadConstants {
                k1: self.k1,
                k2: self.k2,
            });
        }
        if !(self.c1().is_normal() && self.c2().is_normal()) {
            return Err(super::SsimError::BadDataRange(self.data_range));
        }
        Ok(())
    }
}

impl Default for SsimConstants {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Options of [`fused_ssim`](super::fused_ssim).
///
/// The defaults are the reference definition: `Same` padding, an 11-tap window, σ = 1.5, data
/// in [0, 1] with C1 = 1e-4 and C2 = 9e-4, with the kernels' default [`SsimLayout`].
///
/// ```
/// use burn_sad::ssim::SsimOptions;
///
/// // pytorch-msssim's `ssim(x, y, data_range=255, K=(0.01, 0.03))`, valid padding aside.
/// let eight_bit = SsimOptions::default().with_data_range(255.0).with_constants(0.01, 0.03);
/// assert_eq!(eight_bit.constants.data_range, 255.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SsimOptions {
    /// Border handling.
    pub padding: Padding,
    /// Window size in taps: odd, 3 to 15.
    pub window: usize,
    /// Standard deviation of the Gaussian window, > 0.
    pub sigma: f32,
    /// How the kernels tile the image (speed only; ignored by the reference ops).
    pub layout: SsimLayout,
    /// What a training forward keeps for its backward (memory against time; ignored by the
    /// reference ops).
    pub memory: SsimMemory,
    /// How [`fused_ssim_masked`](super::fused_ssim_masked) uses its mask (ignored by the
    /// unmasked ops).
    pub mask_mode: MaskMode,
    /// The data range and the factors of SSIM's constants.
    pub constants: SsimConstants,
}

impl SsimOptions {
    /// The reference definition (the same as [`Default`], usable in a `const`).
    pub const DEFAULT: Self = Self {
        padding: Padding::Same,
        window: 2 * DEFAULT_RADIUS + 1,
        sigma: DEFAULT_SIGMA,
        layout: SsimLayout::DEFAULT,
        memory: SsimMemory::Store,
        mask_mode: MaskMode::Weights,
        constants: SsimConstants::DEFAULT,
    };

    /// The same options with another padding.
    pub fn with_padding(mut self, padding: Padding) -> Self {
        self.padding = padding;
        self
    }

    /// The same options with another window size and sigma.
    pub fn with_window(mut self, window: usize, sigma: f32) -> Self {
        self.window = window;
        self.sigma = sigma;
        self
    }

    /// The same options with another memory mode.
    pub fn with_memory(mut self, memory: SsimMemory) -> Self {
        self.memory = memory;
        self
    }

    /// The same options with another mask mode.
    pub fn with_mask_mode(mut self, mask_mode: MaskMode) -> Self {
        self.mask_mode = mask_mode;
        self
    }

    /// The same options for data of range `data_range` (255 for 8-bit values, 2 for [−1, 1]);
    /// see [`SsimConstants`].
    pub fn with_data_range(mut self, data_range: f32) -> Self {
        self.constants = self.constants.with_data_range(data_range);
        self
    }

    /// The same options with other factors of SSIM's constants, C1 = (k1·L)², C2 = (k2·L)².
    pub fn with_constants(mut self, k1: f32, k2: f32) -> Self {
        self.constants = self.constants.with_constants(k1, k2);
        self
    }

    /// The same options with another kernel layout.
    pub fn with_layout(mut self, layout: SsimLayout) -> Self {
        self.layout = layout;
        self
    }

    /// Window radius (`window / 2`).
    pub fn radius(&self) -> usize {
        self.window / 2
    }
}

impl Default for SsimOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}
