//! The colours of the debug views (see [`SiteView`]): tensor ops over the winners on the
//! device, and the same formulas on the host ([`view_colours_reference`]) for the tests.

use burn::tensor::{Int, Tensor};
use burn_sad_kernels::sad::{DIRECTION, LOG_ANISO, LOG_TAU, POSITION, SITE_PARAMS};

use super::SiteTable;
use super::views::{SiteView, ViewImage};

/// Per channel, the multiplier and offset of a cell's hash colour: `0.25 + 0.75 ·
/// frac(id · a + b)` (golden-ratio-like steps, so neighbouring ids differ).
const CELL_HASH: [(f32, f32); 3] = [(0.618_034, 0.13), (0.754_877_7, 0.41), (0.569_840_3, 0.73)];
/// The τ ramp: dark blue, teal, yellow.
const TAU_RAMP: [[f32; 3]; 3] = [[0.05, 0.03, 0.35], [0.10, 0.62, 0.55], [0.99, 0.90, 0.15]];
/// The grey of a round site in the anisotropy view.
const ROUND_GREY: f32 = 0.35;

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
/// none), as tensor ops on the winners' device.
pub(super) fn colours(view: SiteView, sites: &Tensor<2>, winners: Tensor<2, Int>) -> ViewImage {
    let [height, width] = winners.dims();
    let table = SiteTable::from_tensor(sites.clone(), width, height).sites;
    let (lo, hi) = scale(view, &table);
    let valid = winners.clone().greater_equal_elem(0).float();
    let index = winners.clone().clamp_min(0).reshape([height * width]);
    let capacity = sites.dims()[0];
    let column = |c: usize| {
        sites
            .clone()
            .narrow(1, c, 1)
            .reshape([capacity])
            .select(0, index.clone())
            .reshape([height, width])
    };
    let channels: [Tensor<2>; 3] = match view {
        SiteView::Image | SiteView::Cells | SiteView::Dots => {
            let id = winners.clone().float();
            let edges = boundaries(&id);
            let keep = valid.clone() * edges.neg().add_scalar(1.0);
            CELL_HASH.map(|(a, b)| {
                let v = id.clone().mul_scalar(a).add_scalar(b);
                let frac = v.clone() - v.floor();
                frac.mul_scalar(0.75).add_scalar(0.25) * keep.clone()
            })
        }
        SiteView::Tau => {
            let t = column(LOG_TAU)
                .sub_scalar(lo)
                .div_scalar((hi - lo).max(1e-6))
                .clamp(0.0, 1.0);
            let low = t.clone().mul_scalar(2.0).clamp(0.0, 1.0);
            let high = t.mul_scalar(2.0).sub_scalar(1.0).clamp(0.0, 1.0);
            [0, 1, 2].map(|c| {
                let [c0, c1, c2] = [TAU_RAMP[0][c], TAU_RAMP[1][c], TAU_RAMP[2][c]];
                (low.clone().mul_scalar(c1 - c0) + high.clone().mul_scalar(c2 - c1)).add_scalar(c0)
                    * valid.clone()
            })
        }
        SiteView::Anisotropy => {
            let v = column(LOG_ANISO)
                .abs()
                .div_scalar(hi.max(1e-6))
                .clamp(0.0, 1.0);
            let (ux, uy) = (column(DIRECTION), column(DIRECTION + 1));
            let axis = [
                ux.clone() * ux.clone(),
                uy.clone() * uy.clone(),
                (ux * uy).mul_scalar(2.0).abs(),
            ];
            axis.map(|a| {
                (v.clone().neg().add_scalar(1.0).mul_scalar(ROUND_GREY) + v.clone() * a)
                    * valid.clone()
            })
        }
    };
    ViewImage {
        image: Tensor::stack(channels.to_vec(), 0).clamp(0.0, 1.0),
        legend: legend(view, (lo, hi)),
    }
}

/// 1 where a pixel's winner differs from its right or lower neighbour's, else 0 (`[H, W]`).
fn boundaries(id: &Tensor<2>) -> Tensor<2> {
    let [height, width] = id.dims();
    let device = id.device();
    let mut edges = Tensor::<2>::zeros([height, width], &device);
    if width > 1 {
        let across = id
            .clone()
            .narrow(1, 0, width - 1)
            .not_equal(id.clone().narrow(1, 1, width - 1))
            .float();
        let across = Tensor::cat(vec![across, Tensor::zeros([height, 1], &device)], 1);
        edges = edges.max_pair(across);
    }
    if height > 1 {
        let down = id
            .clone()
            .narrow(0, 0, height - 1)
            .not_equal(id.clone().narrow(0, 1, height - 1))
            .float();
        let down = Tensor::cat(vec![down, Tensor::zeros([1, width], &device)], 0);
        edges = edges.max_pair(down);
    }
    edges
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
                        CELL_HASH.map(|(a, b)| {
                            let v = site as f32 * a + b;
                            0.25 + 0.75 * (v - v.floor())
                        })
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
