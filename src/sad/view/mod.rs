//! Debug views of a render (`sad render --view`): each pixel coloured by the site that wins it
//! (the live candidate of largest blend weight), found on the device by the winner kernel where
//! CubeCL kernels run; the colours are tensor ops on the same device.

mod colours;
mod dots;
mod image;
mod transform;
mod winners;

use burn::tensor::Tensor;

pub use colours::view_colours_reference;
pub use dots::dots_reference;
pub use image::{SiteView, ViewImage};
pub use transform::{MAX_ZOOM, ViewTransform};
pub use winners::{winners, winners_reference};

use crate::sad::{Candidates, RenderReadySites};

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
        return dots::dots(sites, image);
    }
    let winners = winners(sites, candidates);
    colours::colours(view, sites.sites(), winners)
}
