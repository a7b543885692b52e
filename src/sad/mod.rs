//! SAD, Soft Anisotropic Diagrams: an image as a soft, anisotropic, differentiable diagram over
//! learnable sites. Each pixel is a softmax blend of its K = 8 candidate sites.
//!
//! - [`Sites`] (a Burn [`Module`](burn::module::Module)) and [`SiteTable`] (host copy) hold the
//!   sites; [`read_sites`] / [`write_sites`] speak the reference's `*_sites.txt` format, and
//!   [`PackedSites`] the 16-byte packed site of the binary `*_sites.sadp` file.
//! - [`Candidates`] keeps each pixel's candidate list: random or flooded initialisation, then
//!   propagation passes.
//! - [`render`] is the differentiable render op, with a hand-written backward kernel.
//! - [`render_sites`] is the reference's render-only mode.
//! - [`fit`] fits an image: the reference trainer's complete recipe.
//!
//! ```
//! use burn_sad::sad::{HEADER, RenderOnlyOptions, parse_sites, render_sites};
//!
//! // The reference trainer's `*_sites.txt`: per site its position, colour, log τ, radius and
//! // anisotropy (see [`read_sites`]).
//! let text = format!(
//!     "{HEADER}\n# Image size: 16 16\n# Total sites: 2\n\
//!      4 4 1 0 0 1.0 0.5 1 0 0\n\
//!      12 12 0 0 1 1.0 0.5 1 0 0\n"
//! );
//! let table = parse_sites(&text)?;
//! let device = burn::tensor::Device::default();
//! let rendered = render_sites(&table, &RenderOnlyOptions::default(), &device)?;
//! assert_eq!(rendered.image.dims(), [3, 16, 16]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Without a CubeCL runtime, the backend extensions' generated dispatch (no backend to forward
// to) takes every argument of every method and uses none.
#[cfg_attr(not(feature = "cube"), allow(unused_variables))]
pub(crate) mod backend;
mod candidates;
pub mod dataset;
mod error;
pub mod fit;
mod format;
mod hilbert;
#[cfg(feature = "cube")]
pub(crate) use backend::plane_sums_possible;
mod reference;
mod render;
mod render_only;
mod sites;
mod strategy;
mod view;

pub use backend::{
    PassConfig, RenderGeometry, SadBackend, SadCandidateKernels, SadKernels, SadReplayKernels,
    SadTrainingKernels, SadViewKernels, SiteRecordKind,
};
pub use candidates::{Candidates, PropagationOptions, jump_for_pass};
pub use error::{SadError, SitesFileError};
pub use format::{
    HEADER, PACKED_HEADER_BYTES, PACKED_MAGIC, PACKED_SITE_BYTES, PACKED_VERSION, PackedRanges,
    PackedSites, SitesFormat, format_g9, parse_sites, parse_sites_bytes, quantise_sites,
    read_sites, read_sites_with_format, sites_to_string, write_sites, write_sites_as,
};
pub use hilbert::HilbertOrder;
pub use reference::{
    blend_at, cell_of_pixel, exact_candidates, f16_bits, f16_to_f32, jump_flood_reference,
    pack_sites_reference, ranking_key, ranking_view, render_reference, site_score,
};
pub use render::{
    RenderReadySites, render, render_ready, render_with, try_render, try_render_with,
};
pub use render_only::{
    MAX_PASSES, RenderOnlyOptions, RenderedSites, psnr, render_sites, render_sites_image,
    render_sites_with_progress,
};
pub use sites::{INACTIVE_SITE, SiteTable, Sites};
pub use strategy::BackwardStrategy;
// The views' host formulas, which the tests compare the kernels with.
#[doc(hidden)]
pub use view::dots_reference;
#[doc(hidden)]
pub use view::view_colours_reference;
#[doc(hidden)]
pub use view::winners_reference;
pub use view::{MAX_ZOOM, SiteView, ViewImage, ViewTransform, render_view, winners};
