//! The `dots` debug view: the render with each live site's position marked on top, a white
//! pixel ringed by 8 black ones, by the mark kernel on the render's device
//! (`burn_sad_kernels::sad::mark_sites_kernel`, which the browser viewer runs too), and the same
//! marks on the host ([`dots_reference`]) for the tests and the Flex fallback.

use burn::tensor::{Tensor, TensorData};
use burn_sad_kernels::sad::{POSITION, SITE_PARAMS};

use super::image::ViewImage;
use crate::sad::sites::live_site_count;
use crate::sad::{RenderReadySites, SiteTable};

/// The 8 ring offsets around a site's pixel.
const RING: [(i64, i64); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

/// The pixel a site at (`x`, `y`) marks, offset by (`dx`, `dy`) and clamped to the image: the
/// nearest integer point (pixels are evaluated at integer coordinates); `None` for a site more
/// than a pixel outside the image (a zoomed view's), which is not marked.
fn marked_pixel(
    x: f32,
    y: f32,
    (dx, dy): (i64, i64),
    (width, height): (usize, usize),
) -> Option<usize> {
    if !(x >= -1.0 && y >= -1.0 && x <= width as f32 && y <= height as f32) {
        return None;
    }
    let px = ((x + 0.5).floor() as i64 + dx).clamp(0, width as i64 - 1) as usize;
    let py = ((y + 0.5).floor() as i64 + dy).clamp(0, height as i64 - 1) as usize;
    Some(py * width + px)
}

/// `image` (`[3, H, W]`) clamped to [0, 1] with the live sites of `sites` marked where their
/// records place them (see [`RenderReadySites::viewed`]): centres white, rings black (a centre
/// wins over another site's ring).
pub(super) fn dots(sites: &RenderReadySites, image: Tensor<3>) -> ViewImage {
    let [_, height, width] = image.dims();
    let count = live_site_count(sites.sites().clone());
    let legend =
        format!("dots: the render, each of the {count} live sites a white pixel ringed in black");
    #[cfg(feature = "cube")]
    if let Some(records) = sites.records() {
        use crate::sad::SadViewKernels;
        use crate::sad::backend::KernelCall;
        use burn::backend::Dispatch;
        let call = KernelCall::on(&image.device());
        let marked: Tensor<3> = call.out(<Dispatch as SadViewKernels>::sad_mark_sites(
            KernelCall::arg(records.clone()),
            KernelCall::arg(image),
        ));
        return ViewImage {
            image: marked.clamp(0.0, 1.0),
            legend,
        };
    }
    // Without kernels the records are the sites themselves (no view but the identity).
    let table = SiteTable::from_tensor(sites.sites().clone(), width, height);
    let device = image.device();
    let values = image.try_to_vec_as::<f32>().expect("a render is readable");
    let marked = dots_reference(&table.sites, &values, (width, height));
    ViewImage {
        image: Tensor::from_data(TensorData::new(marked, [3, height, width]), &device),
        legend,
    }
}

/// The `dots` view ([`SiteView::Dots`](super::SiteView::Dots)) on the host: `image`
/// (`[3, H, W]` values) clamped, with the marks of the live sites of `sites` (positions in the
/// image's pixels; sites more than a pixel outside it are not marked).
pub fn dots_reference(
    sites: &[[f32; SITE_PARAMS]],
    image: &[f32],
    (width, height): (usize, usize),
) -> Vec<f32> {
    let plane = width * height;
    let mut out: Vec<f32> = image.iter().map(|v| v.clamp(0.0, 1.0)).collect();
    let live = || sites.iter().filter(|s| s[POSITION] >= 0.0);
    let mut paint = |offset: (i64, i64), value: f32| {
        for site in live() {
            let at = (site[POSITION], site[POSITION + 1]);
            if let Some(pixel) = marked_pixel(at.0, at.1, offset, (width, height)) {
                for c in 0..3 {
                    out[c * plane + pixel] = value;
                }
            }
        }
    };
    for offset in RING {
        paint(offset, 0.0);
    }
    paint((0, 0), 1.0);
    out
}
