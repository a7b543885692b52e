//! The colours of the debug views (see [`SiteView`]): the view-colour kernel over the winners
//! on the device (`burn_sad_kernels::sad::view_colour_kernel`, which the browser viewer runs
//! too), and the same formulas on the host ([`view_colours_reference`]) for the tests and the
//! Flex fallback.

use burn::tensor::{Int, Tensor, TensorData};
#[cfg(feature = "cube")]
use burn_sad_kernels::sad::ViewColours;
use burn_sad_kernels::sad::{
    DIRECTION, LOG_ANISO, LOG_TAU, POSITION, ROUND_GREY, SITE_PARAMS, TAU_RAMP, cell_colour,
};

use super::image::{SiteView, ViewImage};
use crate::sad::SiteTable;

/// The view's scale from the live sites of `sites` (`[capacity, 10]`): (lo, hi) of log τ, or
/// (0, max |log anisotropy|).
fn scale(view: SiteView, sites: &[[f32; SITE_PARAMS]]) -> (f32, f32) {
    let live = sites.iter().filter(|s| s[POSITION] >= 0.0);
    match view {
        SiteView::Tau => live.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), s| {
            (lo.min(s[LOG_TAU]), hi.max(s[LOG_TAU]))
        }),
        _ => (0.0, live.fold(0.0f32, |top, s| top.max(s[LOG_ANISO].abs()))),
    }
}

/// The legend line of `view` at scale `(lo, hi)`.
fn legend(view: SiteView, (lo, hi): (f32, f32)) -> String {
    match view {
        SiteView::Image => "image: the render".into(),
        // Not reached: `render_view` draws the dots view with its own legend (`view_dots`).
        SiteView::Dots => "dots: the render with the sites marked".into(),
        SiteView::Cells => "cells: one colour per site (a hash of its id), boundaries black".into(),
        SiteView::Tau => {
            format!("tau: log τ from {lo:.3} (dark blue) through teal to {hi:.3} (yellow)")
        }
        SiteView::Anisotropy => format!(
            "anisotropy: grey where round, brighter up to |log anisotropy| = {hi:.3}; long axis red horizontal, green vertical, blue diagonal"
        ),
    }
}

/// `view` of the sites `sites` (`[capacity, 10]`) from their `winners` (`[H, W]`, −1 for
/// none): the view-colour kernel where CubeCL kernels run, else [`view_colours_reference`].
pub(super) fn colours(view: SiteView, sites: &Tensor<2>, winners: Tensor<2, Int>) -> ViewImage {
    let [height, width] = winners.dims();
    let table = SiteTable::from_tensor(sites.clone(), width, height).sites;
    let scale = scale(view, &table);
    let legend = legend(view, scale);
    #[cfg(feature = "cube")]
    if crate::device::uses_fused_kernels(&sites.device()) {
        let colours = match view {
            SiteView::Tau => ViewColours::Tau,
            SiteView::Anisotropy => ViewColours::Anisotropy,
            SiteView::Image | SiteView::Cells | SiteView::Dots => ViewColours::Cells,
        };
        use crate::sad::SadViewKernels;
        use crate::sad::backend::KernelCall;
        use burn::backend::Dispatch;
        let call = KernelCall::on(&sites.device());
        let image = call.out(<Dispatch as SadViewKernels>::sad_view_colours(
            KernelCall::arg(sites.clone()),
            KernelCall::arg(winners),
            colours,
            scale,
        ));
        return ViewImage { image, legend };
    }
    let ids = winners
        .try_to_vec_as::<i32>()
        .expect("winners are readable");
    let colours = view_colours_reference(view, &table, &ids, (width, height));
    ViewImage {
        image: Tensor::from_data(
            TensorData::new(colours, [3, height, width]),
            &sites.device(),
        ),
        legend,
    }
}

/// [`SiteView`]'s colours on the host, planar `[3, H, W]`, from the sites and their winners
/// (`H × W`, −1 for none): the formulas of the device path, written plainly. The views coloured
/// by winners are `Cells`, `Tau` and `Anisotropy`; `Image` and `Dots` are drawn on the render
/// instead (see [`render_view`](super::render_view) and
/// [`dots_reference`](super::dots_reference)), and here give the `Cells` colours.
pub fn view_colours_reference(
    view: SiteView,
    sites: &[[f32; SITE_PARAMS]],
    winners: &[i32],
    (width, height): (usize, usize),
) -> Vec<f32> {
    let (lo, hi) = scale(view, sites);
    let plane = width * height;
    let mut out = vec![0f32; 3 * plane];
    for y in 0..height {
        for x in 0..width {
            let i = y * width + x;
            let Ok(site) = usize::try_from(winners[i]) else {
                continue;
            };
            let s = &sites[site];
            let colour: [f32; 3] = match view {
                SiteView::Image | SiteView::Cells | SiteView::Dots => {
                    let differs = |j: usize| winners[j] != winners[i];
                    let edge =
                        (x + 1 < width && differs(i + 1)) || (y + 1 < height && differs(i + width));
                    if edge {
                        [0.0; 3]
                    } else {
                        [0, 1, 2].map(|c| cell_colour(site as u32, c))
                    }
                }
                SiteView::Tau => {
                    let t = ((s[LOG_TAU] - lo) / (hi - lo).max(1e-6)).clamp(0.0, 1.0);
                    let (low, high) = ((2.0 * t).min(1.0), (2.0 * t - 1.0).max(0.0));
                    [0, 1, 2].map(|c| {
                        let [c0, c1, c2] = [TAU_RAMP[0][c], TAU_RAMP[1][c], TAU_RAMP[2][c]];
                        c0 + low * (c1 - c0) + high * (c2 - c1)
                    })
                }
                SiteView::Anisotropy => {
                    let v = (s[LOG_ANISO].abs() / hi.max(1e-6)).clamp(0.0, 1.0);
                    let (ux, uy) = (s[DIRECTION], s[DIRECTION + 1]);
                    [ux * ux, uy * uy, (2.0 * ux * uy).abs()]
                        .map(|a| ROUND_GREY * (1.0 - v) + v * a)
                }
            };
            for c in 0..3 {
                out[c * plane + i] = colour[c].clamp(0.0, 1.0);
            }
        }
    }
    out
}
