//! Backward kernel: the gradient of mean SSIM with respect to each tracked input.
//!
//! Every moment is a Gaussian correlation of x, x² or x·y, and the window is symmetric, so the
//! adjoint of each moment is the same blur applied to the stored partial map:
//! dL/dx = g·(G[∂S/∂μ₁] + 2x·G[∂S/∂σ²] + y·G[∂S/∂σ₁₂]), and symmetrically for y.

use cubecl::prelude::*;

use super::args::{BackwardArgs, BackwardConfig, BackwardOutput, InputStrides, Upstream};
use super::index::input_indices;
use super::load::{InputEncoding, load_input};
use super::ring::blur_ring;
use super::stage::pass_texel;
use super::window::gaussian_taps;
use super::{COLUMNS, COVARIANCE_SLOT, SIGMA_SQ_SLOT};

/// Computes the input gradients for one tile of one plane (layout as in the forward).
///
/// - `partials`: the stack written by the training forward with the same `targets`.
/// - `upstream[plane · args.upstream_stride]` ([`Upstream::PerPlane`]): the upstream gradient
///   of this plane's forward value (stride 0 when the forward summed all planes into one value).
/// - With [`Upstream::PerPixel`], `upstream` is instead one gradient per pixel,
///   `[planes·height·width]` (of a forward that wrote the map, zero outside the map region):
///   every partial map is weighted by it as it is staged, and the L1 step at each pixel by its
///   own value (`upstream_stride` is unused). For 3D's in-slice stage the staged maps are
///   weighted too.
/// - `args.ssim_scale`, `args.l1_scale`, `config.l1`: as in the forward.
/// - `img1`, `img2`: the inputs in their storage types, read as `F` where
///   `config.input_layout` and `strides` place them (see the forward);
///   `partials`, `upstream` are `F`.
/// - `mask`: under `config.window_mask`, the forward's mask (`planes / args.planes_per_mask`
///   planes): each gradient is the blurred partials times the pixel's weight. Unused otherwise
///   (may be one element).
/// - `grads`: `[grad_count, planes·height·width]` of `G` (the tracked inputs' float type),
///   img1's gradient first when both are tracked.
/// - With [`BackwardOutput::BlurredPartials`], the kernel is the in-slice stage of the 3D
///   backward instead: it writes the XY-blurred partial maps as a
///   `[partial_count, planes·height·width]` stack into `grads` of `G = F` (`img1`, `img2`, the
///   mask and the scales are then unused).
///
/// Launch with a `(COLUMNS, layout.strips)` cube and a
/// `(⌈W / COLUMNS⌉, ⌈H / layout.tile_rows()⌉, planes)` grid.
#[cube(launch, launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn ssim_backward_kernel<F: Float, I1: Numeric, I2: Numeric, G: Float>(
    img1: &Tensor<I1>,
    img2: &Tensor<I2>,
    mask: &Tensor<F>,
    partials: &Tensor<F>,
    upstream: &Tensor<F>,
    grads: &mut Tensor<G>,
    args: BackwardArgs,
    strides: InputStrides,
    #[comptime] config: BackwardConfig,
    #[define(F, I1, I2, G)] _dtypes: [ElemType; 4],
) {
    let radius = comptime![config.radius];
    let layout = comptime![config.layout];
    let targets = comptime![config.targets];
    let per_pixel = comptime![config.upstream == Upstream::PerPixel];
    let taps = comptime![gaussian_taps(radius, config.sigma_bits)];
    let taps_len = comptime![2 * radius + 1];
    let maps = comptime![targets.partial_count()];
    let span_x = comptime![COLUMNS + 2 * radius];
    let span_y = comptime![layout.tile_rows() + 2 * radius];
    let plane_stride = comptime![span_x * span_y];
    let height = args.height;
    let width = args.width;
    let unit = UNIT_POS as usize;
    let column = UNIT_POS_X as usize;
    let strip = UNIT_POS_Y as usize;
    let x0 = CUBE_POS_X as usize * COLUMNS;
    let y0 = CUBE_POS_Y as usize * comptime![layout.tile_rows()];
    let plane = CUBE_POS_Z as usize;
    let plane_base = plane * height * width;
    let mask_base = (plane / args.planes_per_mask) * height * width;
    // Elements per map: the images' (shape's, whatever their strides).
    let total = img1.len();

    // Stage the partial maps over the tile and its apron, planar, zero outside the image, in
    // the forward's unrolled passes.
    let mut staged = Shared::<[F]>::new_slice(comptime![layout.staged_len(radius, maps)]);
    let units = comptime![layout.units()];
    let unit_row = unit / span_x;
    let unit_col = unit % span_x;
    #[unroll]
    for pass in 0..comptime![plane_stride.div_ceil(units)] {
        let step = comptime![pass * units];
        let texel = pass_texel(unit_row, unit_col, step, span_x);
        let sy = texel.row;
        let gy = y0 + sy;
        let gx = x0 + texel.col;
        let inside = sy < span_y
            && gy >= radius
            && gy < height + radius
            && gx >= radius
            && gx < width + radius;
        let idx = plane_base + (gy - radius) * width + gx - radius;
        let mut weight = F::new(1.0);
        if comptime![per_pixel] {
            if inside {
                weight = upstream[idx];
            }
        }
        let i = unit + step;
        #[unroll]
        for m in 0..maps {
            let mut v = F::new(0.0);
            if inside {
                v = partials[m * total + idx];
                if comptime![per_pixel] {
                    v *= weight;
                }
            }
            if i < plane_stride {
                staged[m * plane_stride + i] = v;
            }
        }
    }
    sync_cube();

    let x = x0 + column;
    let first_row = strip * comptime![layout.rows];
    let mut plane_upstream = F::new(1.0);
    if comptime![!per_pixel] {
        plane_upstream = upstream[CUBE_POS_Z as usize * args.upstream_stride];
    }
    let scale = plane_upstream * F::cast_from(args.ssim_scale);
    let l1_step = plane_upstream * F::cast_from(args.l1_scale);
    let two = F::new(2.0);
    let mut ring = Array::<F>::new(comptime![maps * taps_len]);
    #[unroll]
    for r in 0..comptime![layout.rows + 2 * radius] {
        let centre = (first_row + r) * span_x + column + radius;
        let slot = comptime![(r % taps_len) * maps];
        #[unroll]
        for m in 0..maps {
            let base = m * plane_stride + centre;
            let mut acc = F::new(comptime![taps[0]]) * staged[base];
            #[unroll]
            for d in 1..comptime![radius + 1] {
                acc += F::new(comptime![taps[d]]) * (staged[base - d] + staged[base + d]);
            }
            ring[slot + m] = acc;
        }

        if comptime![r >= 2 * radius] {
            let out = comptime![r - 2 * radius];
            let v = blur_ring::<F>(&ring, out, radius, config.sigma_bits, maps);
            let y = y0 + first_row + out;
            if comptime![config.output == BackwardOutput::BlurredPartials] {
                if x < width && y < height {
                    let idx = plane_base + y * width + x;
                    #[unroll]
                    for m in 0..maps {
                        grads[m * total + idx] = G::cast_from(v[m]);
                    }
                }
            } else {
                if x < width && y < height {
                    let offset = y * width + x;
                    let idx = plane_base + offset;
                    let at =
                        input_indices(idx, plane, y, x, &strides, comptime![config.input_layout]);
                    let a = load_input::<F, I1>(img1, at.img1, InputEncoding::Float);
                    let b = load_input::<F, I2>(img2, at.img2, comptime![config.img2_encoding]);
                    let g_var = v[comptime![SIGMA_SQ_SLOT]];
                    let g_cov = v[comptime![COVARIANCE_SLOT]];
                    // Under a window mask a pixel enters every statistic times its weight.
                    let mut ssim_step = scale;
                    if comptime![config.window_mask] {
                        ssim_step *= mask[mask_base + offset];
                    }
                    // d|a − b|/da = sign(a − b), zero at a = b.
                    let mut l1_grad = F::new(0.0);
                    if comptime![config.l1] {
                        let mut step = l1_step;
                        if comptime![per_pixel] {
                            step *= upstream[idx];
                        }
                        if a > b {
                            l1_grad = step;
                        }
                        if a < b {
                            l1_grad = -step;
                        }
                    }
                    if comptime![targets.img1] {
                        let g_mu = v[comptime![targets.mu1_slot()]];
                        grads[idx] = G::cast_from(
                            ssim_step * (g_mu + two * a * g_var + b * g_cov) + l1_grad,
                        );
                    }
                    if comptime![targets.img2] {
                        let g_mu = v[comptime![targets.mu2_slot()]];
                        let slot = comptime![targets.img1 as usize];
                        grads[slot * total + idx] = G::cast_from(
                            ssim_step * (g_mu + two * b * g_var + a * g_cov) - l1_grad,
                        );
                    }
                }
            }
        }
    }
}
