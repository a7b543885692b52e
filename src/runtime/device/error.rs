//! Why a device could not be chosen or cannot run an op.

use super::KernelFamily;

/// Why a device was refused: one line that says what is wrong and what to do. The ops' own
/// errors (`SsimError::UnsupportedDevice`, `SadError::UnsupportedDevice`, …) carry this line.
///
/// ```
/// use burn_sad::device::{DeviceChoice, DeviceError};
///
/// let error = "tpu".parse::<DeviceChoice>().unwrap_err();
/// assert!(matches!(error, DeviceError::Unknown(_)));
/// assert!(error.to_string().starts_with("unknown device `tpu`"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
    /// A device name that is none of [`DeviceChoice`](super::DeviceChoice)'s.
    #[error(
        "unknown device `{0}`: expected auto, cuda, rocm, wgpu, wgpu-cpu, vulkan, metal, cpu or flex"
    )]
    Unknown(String),
    /// A `KIND:N` entry whose index is not a whole number.
    #[error("`{0}`: the index after `:` must be a whole number")]
    BadIndex(String),
    /// A device whose runtime this build does not have (its Cargo feature is off).
    #[error("device `{0}` is not compiled into this build")]
    NotCompiledIn(String),
    /// A device that did not answer a tiny round trip.
    #[error("device `{0}` failed to initialise")]
    FailedToInitialise(String),
    /// A device the user named, refused for `problem`.
    #[error("device `{name}`: {problem}")]
    Refused {
        /// The device as the user named it.
        name: String,
        /// Why.
        problem: Box<DeviceError>,
    },
    /// A driver this crate's kernels cannot run on (see
    /// [`kernel_support`](super::kernel_support)), with what to use instead.
    #[error("{0}")]
    Driver(String),
    /// A device that lacks what `family`'s kernels need.
    #[error(
        "this device cannot run the {family} kernels: it has no {what}; use a Vulkan driver \
         (Mesa's lavapipe on a CPU), a CUDA or ROCm GPU, or `--device flex`"
    )]
    MissingFeature {
        /// The family refused.
        family: KernelFamily,
        /// What the device lacks, as a person reads it.
        what: String,
    },
    /// A device that stores no f16 values, for
    /// [`SsimMemory::StoreHalf`](crate::ssim::SsimMemory::StoreHalf).
    #[error(
        "this device stores no f16 values, which SsimMemory::StoreHalf needs; use SsimMemory::Store"
    )]
    NoHalfStorage,
    /// `--devices all` found no GPU.
    #[error("--devices all found no CUDA or ROCm GPU in this build and machine")]
    NoGpus,
    /// No device of the build answered (and Flex, the fallback, is not compiled in).
    #[error("no compiled-in device initialised (build with the `flex` feature for a CPU fallback)")]
    NoDevice,
}

/// The line, for code that keeps errors as strings.
impl From<DeviceError> for String {
    fn from(error: DeviceError) -> Self {
        error.to_string()
    }
}
