//! Typed errors of the SAD ops and files.

/// Why a sites file could not be read or written.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SitesFileError {
    /// The file could not be opened, read or written.
    #[error("{0}")]
    Io(String),
    /// A line is malformed.
    #[error("line {line}: {reason}")]
    Line {
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// The file holds no site.
    #[error("the file holds no sites")]
    NoSites,
    /// A packed sites file is malformed.
    #[error("packed sites file: {0}")]
    Packed(String),
    /// Every site of the file is inactive (position x < 0), so it would render black.
    #[error("all {0} sites are inactive (position x < 0); nothing would render")]
    NoActiveSites(usize),
}

/// Why a SAD op rejected its inputs.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SadError {
    /// The sites tensor is not `[capacity, 10]`.
    #[error("render: sites must be [capacity, 10], got {0:?}")]
    SitesShape(Vec<usize>),
    /// The candidate tensor does not match the image's candidate grid.
    #[error("render: candidates must be [{expected}, 8] for this image size, got {got:?}")]
    CandidatesShape {
        /// Cells of the candidate grid.
        expected: usize,
        /// The shape given.
        got: Vec<usize>,
    },
    /// The image size is zero, or too large for the kernels' index arithmetic.
    #[error("render: image size must be between 1×1 and 65535×65535, got {width}×{height}")]
    BadSize {
        /// Requested width.
        width: usize,
        /// Requested height.
        height: usize,
    },
    /// The requested render is larger than render-only mode allows.
    #[error("render: {width}×{height} is larger than the limit of {max} pixels on a side")]
    TooLarge {
        /// Requested width.
        width: usize,
        /// Requested height.
        height: usize,
        /// The limit.
        max: usize,
    },
    /// More propagation passes than render-only mode runs.
    #[error("render: {passes} propagation passes is more than the limit of {max}")]
    TooManyPasses {
        /// Requested passes.
        passes: u32,
        /// The limit.
        max: u32,
    },
    /// There are no sites, or more than the 2³¹ − 1 an i32 candidate id can name.
    #[error("render: the site buffer must hold between 1 and 2147483647 sites, got {0}")]
    BadCapacity(usize),
    /// Neither the file nor the options give an image size.
    #[error("render: the sites file has no image size; give --width and --height")]
    NoSize,
    /// The device failed.
    #[error("device error: {0}")]
    Device(String),
    /// Sites and candidates live on different devices.
    #[error("render: sites are on {sites} but candidates are on {candidates}")]
    DeviceMismatch {
        /// Device of the sites.
        sites: String,
        /// Device of the candidates.
        candidates: String,
    },
    /// A view's zoom is not a finite number in (0, max].
    #[error("render: the zoom must be a number above 0 and at most {max}, got {zoom}")]
    BadZoom {
        /// The zoom given.
        zoom: f32,
        /// The limit.
        max: f32,
    },
    /// A view's centre is not a finite point.
    #[error("render: the view's centre must be a finite point, got ({x}, {y})")]
    BadCentre {
        /// x given.
        x: f32,
        /// y given.
        y: f32,
    },
    /// A zoomed view was asked of a device without CubeCL kernels (the Flex fallback): the
    /// view's records are packed by a kernel.
    #[error("render: zoomed views need a device that runs the CubeCL kernels (not flex)")]
    ViewNeedsKernels,
    /// The backward strategy asks for plane sums on a device without them (see
    /// [`BackwardStrategy::supported`](super::BackwardStrategy::supported)).
    #[error("render: {}", .0.unsupported_reason())]
    UnsupportedStrategy(super::BackwardStrategy),
    /// The device cannot run the kernels (see
    /// [`kernel_support`](crate::device::kernel_support)).
    #[error("render: {0}")]
    UnsupportedDevice(String),
}
