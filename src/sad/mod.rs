//! SAD, Soft Anisotropic Diagrams: an image as a soft, anisotropic, differentiable diagram over
//! learnable sites. Each pixel is a softmax blend of its K = 8 candidate sites.
//!
//! - [`Sites`] (a Burn [`Module`](burn::module::Module)) and [`SiteTable`] (host copy) hold the
//!   sites; [`read_sites`] / [`write_sites`] speak the reference's `*_sites.txt` format.
//! - [`Candidates`] keeps each pixel's candidate list: random or flooded initialisation, then
//!   propagation passes.
//! - [`render`] is the differentiable render op, with a hand-written backward kernel.
//! - [`render_sites`] is the reference's render-only mode.
//! - [`fit`] fits an image: the reference trainer's complete recipe.

mod autodiff;
mod backend;
mod candidates;
pub mod dataset;
mod error;
mod file;
pub mod fit;
mod fusion;
mod hilbert;
#[cfg(feature = "cube")]
mod launch;
mod reference;
mod render;
mod render_only;
mod sites;
mod view_colours;
mod view_dots;
mod view_transform;
mod views;

pub use backend::{PassConfig, RenderGeometry, SadBackend, SiteRecordKind};
pub use candidates::{Candidates, PropagationOptions, jump_for_pass};
pub use error::{SadError, SitesFileError};
pub use file::{HEADER, format_g9, parse_sites, read_sites, sites_to_string, write_sites};
pub use hilbert::HilbertOrder;
pub use reference::{
    blend_at, cell_of_pixel, exact_candidates, f16_bits, f16_to_f32, jump_flood_reference,
    pack_sites_reference, ranking_key, ranking_view, render_reference, site_score,
};
pub use render::{RenderReadySites, render, render_ready, try_render};
pub use render_only::{
    MAX_PASSES, RenderOnlyOptions, RenderedSites, psnr, render_sites, render_sites_with_progress,
};
pub use sites::{INACTIVE_SITE, SiteTable, Sites};
pub use view_colours::view_colours_reference;
pub use view_dots::dots_reference;
pub use view_transform::{MAX_ZOOM, ViewTransform};
pub use views::{SiteView, ViewImage, render_view, winners, winners_reference};
