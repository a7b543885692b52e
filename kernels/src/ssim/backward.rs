//! Backward kernel: the gradient of mean SSIM with respect to each tracked input.
//!
//! Every moment is a Gaussian correlation of x, x² or x·y, and the window is symmetric, so the
//! adjoint of each moment is the same blur applied to the stored partial map:
//! dL/dx = g·(G[∂S/∂μ₁] + 2x·G[∂S/∂σ²] + y·G[∂S/∂σ₁₂]), and symmetrically for y.

use cubecl::prelude::*;

use super::args::{BackwardConfig, BackwardOutput, BackwardSources, Upstream};
use super::buffer::{Quad, blur_pair, store_row};
use super::index::input_indices;
use super::load::{InputEncoding, load_input};
use super::pairs::{PairValues, write_pair};
use super::ring::blur_ring;
use super::walk::{OutputPixel, WalkPixel, output_pixel, pair_item, rounds, walk_pixel};
use super::{COVARIANCE_SLOT, SIGMA_SQ_SLOT};

/// Computes the input gradients for one tile of one plane (layout as in the forward).
/// `sources` holds the images, the mask, the partial maps, the upstream gradient, the scalars
/// `args` and the `strides`:
///
/// - `partials`: the stack written by the training forward with the same `targets`, stored as
///   `P` (f32 or f16) and read as `F`.
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
///   `upstream` is `F`.
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
/// Launch with a `(WALK_COLUMNS, layout.strips)` cube and a
/// `(⌈W / tile_columns(radius)⌉, ⌈H / layout.tile_rows(radius)⌉, planes)` grid; the layout of
/// the walk and the pairs is the forward's (see the module docs).
#[cube(launch, launch_unchecked)]
pub fn ssim_backward_kernel<F: Float, I1: Numeric, I2: Numeric, P: Float, G: Float>(
    sources: &BackwardSources<F, I1, I2, P>,
    grads: &mut Tensor<G>,
    #[comptime] config: BackwardConfig,
    #[define(F, I1, I2, P, G)] _dtypes: [ElemType; 5],
) {
    let radius = comptime![config.radius];
    let layout = comptime![config.layout];
    let maps = comptime![config.targets.partial_count()];
    let taps_len = comptime![2 * radius + 1];
    let buffer_rows = comptime![layout.buffer_rows(radius)];
    let args = &sources.args;
    let at = walk_pixel(
        args.height,
        args.width,
        args.planes_per_mask,
        radius,
        layout,
    );
    let column = UNIT_POS_X as usize;
    let buffer_row = UNIT_POS_Y as usize * taps_len;
    let mut quads = Shared::<[Quad<F>]>::new_slice(comptime![layout.quad_len(radius, maps).max(1)]);
    // The scalar planes, also the scratch of the tile sum's reduction.
    let mut buffer = Shared::<[F]>::new_slice(comptime![
        layout.scalar_len(radius, maps).max(layout.units())
    ]);
    let writes = comptime![config.grad_writes()];
    // Elements per map: every plane's.
    let total = args.height * args.width * CUBE_COUNT_Z as usize;
    let mut plane_upstream = F::new(1.0);
    if comptime![config.upstream == Upstream::PerPlane] {
        plane_upstream = sources.upstream[at.plane * args.upstream_stride];
    }

    // The last `taps_len` input rows' partials, as in the forward's ring, and the chunk's
    // rows read one chunk ahead.
    let mut ring = Array::<F>::new(comptime![maps * taps_len]);
    let mut fetched = Array::<F>::new(comptime![maps * taps_len]);
    #[unroll]
    for t in 0..comptime![2 * radius] {
        walk_partials::<F, I1, I2, P>(sources, &mut ring, &at, t, total, config, t);
    }
    fetch_chunk::<F, I1, I2, P>(
        sources,
        &mut fetched,
        &at,
        comptime![2 * radius],
        total,
        config,
    );
    for chunk in 0..comptime![layout.chunks] {
        #[unroll]
        for c in 0..taps_len {
            let ring_slot = comptime![(c + 2 * radius) % taps_len];
            #[unroll]
            for m in 0..maps {
                ring[comptime![ring_slot * maps + m]] = fetched[comptime![c * maps + m]];
            }
            let v = blur_ring::<F>(&ring, c, radius, config.sigma_bits, maps);
            store_row::<F>(
                &mut quads,
                &mut buffer,
                &v,
                buffer_row + c,
                column,
                radius,
                buffer_rows,
                maps,
            );
        }
        // The next chunk's loads fly while the cube blurs this one across.
        if chunk + 1 < comptime![layout.chunks] {
            fetch_chunk::<F, I1, I2, P>(
                sources,
                &mut fetched,
                &at,
                (chunk + 1) * taps_len + comptime![2 * radius],
                total,
                config,
            );
        }
        sync_cube();
        for round in 0..comptime![rounds(layout, radius)] {
            let item = pair_item(&at, chunk, round, radius, layout);
            let mut outs = Array::<F>::new(comptime![2 * writes]);
            let mut valid = 0u32;
            if item.row < buffer_rows {
                let blurred = blur_pair::<F>(
                    &quads,
                    &buffer,
                    item.row,
                    item.pair,
                    radius,
                    config.sigma_bits,
                    buffer_rows,
                    maps,
                );
                #[unroll]
                for q in 0..2usize {
                    if item.x + q < args.width && item.y < args.height {
                        valid |= comptime![1u32 << q];
                        let pixel = output_pixel(&at, &item, q);
                        finish_gradient::<F, I1, I2, P>(
                            sources,
                            &mut outs,
                            &blurred,
                            q,
                            &pixel,
                            plane_upstream,
                            config,
                        );
                    }
                }
            }
            write_pair::<F, G>(
                grads,
                &outs,
                at.plane_base + item.y * args.width + item.x,
                valid,
                total,
                comptime![PairValues {
                    first: 0,
                    stride: writes,
                    count: writes,
                }],
                config.writes,
            );
        }
        sync_cube();
    }
}

/// Reads the `2·radius + 1` input rows of a chunk, from row `first` of the walk on, into
/// `fetched` (see [`walk_partials`]).
#[cube]
fn fetch_chunk<F: Float, I1: Numeric, I2: Numeric, P: Float>(
    sources: &BackwardSources<F, I1, I2, P>,
    fetched: &mut Array<F>,
    at: &WalkPixel,
    first: usize,
    total: usize,
    #[comptime] config: BackwardConfig,
) {
    #[unroll]
    for c in 0..comptime![2 * config.radius + 1] {
        walk_partials::<F, I1, I2, P>(sources, fetched, at, first + c, total, config, c);
    }
}

/// Reads input row `t` of the walk at the unit's column: every partial map (weighted by the
/// per-pixel upstream gradient under [`Upstream::PerPixel`]), zero outside the image, into
/// slot `ring_slot` of `ring` (`maps` values a slot).
#[cube]
fn walk_partials<F: Float, I1: Numeric, I2: Numeric, P: Float>(
    sources: &BackwardSources<F, I1, I2, P>,
    ring: &mut Array<F>,
    at: &WalkPixel,
    t: usize,
    total: usize,
    #[comptime] config: BackwardConfig,
    #[comptime] ring_slot: usize,
) {
    let radius = comptime![config.radius];
    let args = &sources.args;
    let maps = comptime![config.targets.partial_count()];
    let row_r = at.row_r + t;
    let inside = at.col_r >= radius
        && at.col_r < args.width + radius
        && row_r >= radius
        && row_r < args.height + radius;
    let base = comptime![ring_slot * maps];
    #[unroll]
    for m in 0..maps {
        ring[base + m] = F::new(0.0);
    }
    if inside {
        let idx = at.plane_base + (row_r - radius) * args.width + at.col_r - radius;
        let mut weight = F::new(1.0);
        if comptime![config.upstream == Upstream::PerPixel] {
            weight = sources.upstream[idx];
        }
        #[unroll]
        for m in 0..maps {
            let mut v = F::cast_from(sources.partials[m * total + idx]);
            if comptime![config.upstream == Upstream::PerPixel] {
                v *= weight;
            }
            ring[base + m] = v;
        }
    }
}

/// The gradients at `pixel`, pixel `q` of its pair, inside the image, from its blurred partials
/// (`blurred`, the pair's maps each), into its slots of `outs` (img1's first when both are
/// tracked), or the blurred partials themselves with [`BackwardOutput::BlurredPartials`].
#[cube]
fn finish_gradient<F: Float, I1: Numeric, I2: Numeric, P: Float>(
    sources: &BackwardSources<F, I1, I2, P>,
    outs: &mut Array<F>,
    blurred: &Array<F>,
    #[comptime] q: usize,
    pixel: &OutputPixel,
    plane_upstream: F,
    #[comptime] config: BackwardConfig,
) {
    let args = &sources.args;
    let out = comptime![q * config.grad_writes()];
    let first = comptime![q * config.targets.partial_count()];
    let (x, y) = (pixel.x, pixel.y);
    let targets = comptime![config.targets];
    let per_pixel = comptime![config.upstream == Upstream::PerPixel];
    let offset = y * args.width + x;
    let idx = pixel.plane_base + offset;
    if comptime![config.output == BackwardOutput::BlurredPartials] {
        #[unroll]
        for m in 0..comptime![targets.partial_count()] {
            outs[out + m] = blurred[first + m];
        }
    } else {
        let two = F::new(2.0);
        let index = input_indices(
            idx,
            pixel.plane,
            y,
            x,
            &sources.strides,
            comptime![config.input_layout],
        );
        let a = load_input::<F, I1>(&sources.img1, index.img1, InputEncoding::Float);
        let b = load_input::<F, I2>(&sources.img2, index.img2, comptime![config.img2_encoding]);
        let g_var = blurred[comptime![first + SIGMA_SQ_SLOT]];
        let g_cov = blurred[comptime![first + COVARIANCE_SLOT]];
        // Under a window mask a pixel enters every statistic times its weight.
        let mut ssim_step = plane_upstream * F::cast_from(args.ssim_scale);
        if comptime![config.window_mask] {
            ssim_step *= sources.mask[pixel.mask_base + offset];
        }
        // d|a − b|/da = sign(a − b), zero at a = b.
        let mut l1_grad = F::new(0.0);
        if comptime![config.l1] {
            let mut step = plane_upstream * F::cast_from(args.l1_scale);
            if comptime![per_pixel] {
                step *= sources.upstream[idx];
            }
            if a > b {
                l1_grad = step;
            }
            if a < b {
                l1_grad = -step;
            }
        }
        if comptime![targets.img1] {
            let g_mu = blurred[comptime![first + targets.mu1_slot()]];
            outs[out] = ssim_step * (g_mu + two * a * g_var + b * g_cov) + l1_grad;
        }
        if comptime![targets.img2] {
            let g_mu = blurred[comptime![first + targets.mu2_slot()]];
            let slot = comptime![out + targets.img1 as usize];
            outs[slot] = ssim_step * (g_mu + two * b * g_var + a * g_cov) - l1_grad;
        }
    }
}
