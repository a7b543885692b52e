//! How the render's backward kernel sums a tile's contributions: a value chosen from the device
//! by default and settable from code, so that a test can run every form in one process.

/// How the SAD backward kernel (the render's gradient and the fit's squared-error gradients)
/// gathers the contributions of a tile's pixels before its atomic adds.
///
/// Every form computes the same sums (up to the order of float additions); they differ in
/// speed only. The backward first adds each pixel's contribution to a site into a per-tile
/// hash table in shared memory; with *plane sums*, runs of neighbouring lanes of a plane (warp)
/// that add to the same site first sum their contributions with shuffles, and only the run's
/// last lane adds the total to the table, which replaces a run of conflicting shared-memory
/// atomics on one entry by a few shuffles.
///
/// [`Auto`](Self::Auto), the default, picks [`PlaneBallot`](Self::PlaneBallot) where CubeCL
/// marks the device as having plane operations and it adds floats in shared memory natively
/// (CUDA, HIP, Vulkan GPUs with subgroups), and [`TableOnly`](Self::TableOnly) elsewhere;
/// `benches/RESULTS.md` has the measurements behind it. The explicit forms need what they use: [`supported`](Self::supported) says whether a
/// device has it, and the render refuses a form its device lacks.
///
/// ```
/// use burn_sad::sad::BackwardStrategy;
///
/// let strategy = BackwardStrategy::default();
/// assert_eq!(strategy, BackwardStrategy::Auto);
/// assert!(BackwardStrategy::ALL.contains(&BackwardStrategy::TableOnly));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BackwardStrategy {
    /// Chosen from the device's properties at launch (see the type's documentation).
    #[default]
    Auto,
    /// No plane sums: every pixel adds its own contribution to the tile's table. Runs on every
    /// device; the choice where plane sums cannot run (WGSL, whose compiler takes no subgroup
    /// ids in a two-dimensional workgroup) or where shared float atomics are emulated.
    TableOnly,
    /// Plane sums whose runs are found with shuffles alone: a vote, a max-scan of the runs'
    /// first lanes and a plane maximum of their lengths. Planes wider than 32 lanes take this
    /// form under [`PlaneBallot`](Self::PlaneBallot) too; on 32-lane planes it was measured
    /// slower than the ballot (`benches/RESULTS.md`).
    PlaneScan,
    /// Plane sums whose runs are found from one ballot of the lanes that start a run (uniform
    /// integer operations instead of shuffles) on planes of at most 32 lanes, by
    /// [`PlaneScan`](Self::PlaneScan)'s shuffles on wider ones.
    PlaneBallot,
}

impl BackwardStrategy {
    /// Every strategy, [`Auto`](Self::Auto) first: what a test sweeps.
    pub const ALL: [Self; 4] = [
        Self::Auto,
        Self::TableOnly,
        Self::PlaneScan,
        Self::PlaneBallot,
    ];

    /// Whether the form sums runs of lanes with plane operations.
    pub fn uses_planes(self) -> bool {
        matches!(self, Self::PlaneScan | Self::PlaneBallot)
    }

    /// Whether the device can run this strategy: [`Auto`](Self::Auto) and
    /// [`TableOnly`](Self::TableOnly) everywhere, the plane forms where the device's kernels
    /// have plane operations in two-dimensional cubes (see
    /// [`has_plane_sums`](crate::device::has_plane_sums)). The plane forms are false without
    /// CubeCL kernels, where the reference render runs and ignores the strategy.
    pub fn supported(self, device: &burn::tensor::Device) -> bool {
        !self.uses_planes() || crate::device::has_plane_sums(device)
    }

    /// The one line that says why a device without plane sums cannot run this strategy (the
    /// render's [`SadError::UnsupportedStrategy`](super::SadError::UnsupportedStrategy), a
    /// fit's configuration error and the launch's assertion all say it).
    pub(crate) fn unsupported_reason(self) -> String {
        format!(
            "the backward strategy {self} needs plane operations, which this device's kernels \
             do not have; use auto or table-only"
        )
    }
}

impl std::fmt::Display for BackwardStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::TableOnly => "table-only",
            Self::PlaneScan => "plane-scan",
            Self::PlaneBallot => "plane-ballot",
        })
    }
}

impl std::str::FromStr for BackwardStrategy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|strategy| strategy.to_string() == s)
            .ok_or_else(|| {
                format!(
                    "unknown backward strategy `{s}`: expected one of auto, table-only, \
                     plane-scan, plane-ballot"
                )
            })
    }
}
