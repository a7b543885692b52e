//! Debug views of a render (`sad render --view`): each pixel coloured by the site that wins it
//! (the live candidate of largest blend weight), found on the device by the winner kernel where
//! CubeCL kernels run; the colours are tensor ops on the same device.

use burn::tensor::{Int, Tensor, TensorData};
use burn_sad_kernels::sad::K;

use super::{Candidates, RenderGeometry, RenderReadySites, SiteTable, blend_at, cell_of_pixel};

/// What `sad render --view` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SiteView {
    /// The render itself.
    Image,
    /// Each pixel in a colour of its winning site (a hash of the id), cell boundaries black.
    Cells,
    /// The winning site's log τ (sharpness) on a colour ramp from the sites' smallest value
    /// (dark blue) through teal to the largest (yellow).
    Tau,
    /// The winning site's anisotropy: brightness grows with |log anisotropy| (grey where
    /// round), the colour gives the long axis (red horizontal, green vertical, blue diagonal).
    Anisotropy,
    /// The render with each live site's position marked: a white pixel ringed in black.
    Dots,
}

/// A debug view: the image (`[3, H, W]`, in [0, 1]) and a line that explains its colours.
#[derive(Debug)]
pub struct ViewImage {
    /// `[3, height, width]`, in [0, 1].
    pub image: Tensor<3>,
    /// What the colours mean, with the view's scale.
    pub legend: String,
}

/// The site that wins each pixel of the render of `sites` with `candidates`: `[height, width]`,
/// −1 where no candidate is live. The winner kernel where CubeCL kernels run, else
/// [`winners_reference`].
pub fn winners(sites: &RenderReadySites, candidates: &Candidates) -> Tensor<2, Int> {
    let geometry = candidates.geometry();
    #[cfg(feature = "cube")]
    if let Some(records) = sites.records() {
        return fused_winners(records.clone(), candidates);
    }
    let tensor = sites.sites();
    let table = SiteTable::from_tensor(tensor.clone(), geometry.width, geometry.height);
    let ids = candidates
        .ids()
        .try_to_vec_as::<i32>()
        .expect("candidate ids are readable");
    let winners = winners_reference(&table.sites, &ids, geometry);
    Tensor::from_data(
        TensorData::new(winners, [geometry.height, geometry.width]),
        &tensor.device(),
    )
}

/// [`winners`] on the host: per pixel, the live slot of largest weight in [`blend_at`]'s
/// blend, the first where weights tie.
pub fn winners_reference(
    sites: &[[f32; burn_sad_kernels::sad::SITE_PARAMS]],
    ids: &[i32],
    geometry: RenderGeometry,
) -> Vec<i32> {
    let inv_scale_sq = geometry.inv_scale_sq();
    let mut winners = Vec::with_capacity(geometry.width * geometry.height);
    for y in 0..geometry.height {
        for x in 0..geometry.width {
            let cell = cell_of_pixel(x, y, geometry);
            let slots = blend_at(sites, &ids[cell * K..cell * K + K], x, y, inv_scale_sq);
            let mut best: Option<(usize, f32)> = None;
            for (site, weight) in slots {
                if best.is_none_or(|(_, top)| weight > top) {
                    best = Some((site, weight));
                }
            }
            winners.push(best.map_or(-1, |(site, _)| site as i32));
        }
    }
    winners
}

/// The debug view `view` of `sites` rendered with `candidates`, whose render is `image`.
pub fn render_view(
    view: SiteView,
    sites: &RenderReadySites,
    candidates: &Candidates,
    image: Tensor<3>,
) -> ViewImage {
    if view == SiteView::Image {
        return ViewImage {
            image: image.clamp(0.0, 1.0),
            legend: "image: the render".into(),
        };
    }
    if view == SiteView::Dots {
        return super::view_dots::dots(sites, image);
    }
    let winners = winners(sites, candidates);
    super::view_colours::colours(view, sites.sites(), winners)
}

#[cfg(feature = "cube")]
fn fused_winners(records: Tensor<2, Int>, candidates: &Candidates) -> Tensor<2, Int> {
    use burn::backend::Dispatch;

    use super::SadBackend;
    Tensor::from_dispatch(<Dispatch as SadBackend>::sad_winners(
        records.into_dispatch(),
        candidates.ids().into_dispatch(),
        candidates.geometry(),
    ))
}
