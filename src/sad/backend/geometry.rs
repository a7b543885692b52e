//! The arguments the SAD kernels share: the render's geometry, a propagation pass's
//! configuration (the kernels' own launch struct), and the kind of packed site record.

pub use burn_sad_kernels::sad::PassConfig;

/// The image a render produces and the candidate grid it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RenderGeometry {
    /// Image width in pixels.
    pub width: usize,
    /// Image height in pixels.
    pub height: usize,
    /// Pixels per candidate cell along each axis (1: one list per pixel).
    pub downscale: usize,
}

impl RenderGeometry {
    /// One candidate list per pixel of a `width × height` image.
    pub fn new(width: usize, height: usize) -> Self {
        Self {
            width,
            height,
            downscale: 1,
        }
    }

    /// Candidate grid width: ⌈W / downscale⌉, at least 1.
    pub fn cand_w(&self) -> usize {
        self.width.div_ceil(self.downscale.max(1)).max(1)
    }

    /// Candidate grid height: ⌈H / downscale⌉, at least 1.
    pub fn cand_h(&self) -> usize {
        self.height.div_ceil(self.downscale.max(1)).max(1)
    }

    /// Cells of the candidate grid.
    pub fn cells(&self) -> usize {
        self.cand_w() * self.cand_h()
    }

    /// 1 / max(W, H)², as the reference computes it in f32.
    pub fn inv_scale_sq(&self) -> f32 {
        let side = self.width.max(self.height) as f32;
        1.0 / (side * side)
    }
}

/// Which of the two site records [`SadCandidateKernels::sad_pack_sites`](super::SadCandidateKernels::sad_pack_sites) writes (see
/// `burn_sad_kernels::sad::pack_sites_kernel`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SiteRecordKind {
    /// The ranking copy the propagation pass reads: the reference's f16 rounding of the
    /// ranking inputs, with the per-site part of the key precomputed, `[capacity, 8]` u32.
    Ranking,
    /// The full record the render, the backward, the statistics and the flood read: exact
    /// values and the colour, `[capacity, 12]` u32.
    Full,
}

impl SiteRecordKind {
    /// u32 words per site.
    pub fn words(self) -> usize {
        match self {
            Self::Ranking => burn_sad_kernels::sad::PACKED_WORDS,
            Self::Full => burn_sad_kernels::sad::RECORD_WORDS,
        }
    }
}
