//! Forward kernel: SSIM over one tile of one plane, reduced to a single sum, and (in training)
//! the per-pixel partial derivatives of SSIM with respect to the local moments.

use cubecl::prelude::*;

use super::args::{ForwardConfig, ForwardOutput, ForwardSources};
use super::buffer::{Quad, blur_pair, store_row};
use super::epilogue::{LocalMoments, ssim_terms};
use super::index::input_indices;
use super::load::{InputEncoding, decode_input, load_input};
use super::pairs::{PairValues, write_pair};
use super::reduce::write_tile_sum;
use super::ring::blur_ring;
use super::walk::{OutputPixel, WalkPixel, output_pixel, pair_item, rounds, walk_pixel};
use super::{COVARIANCE_SLOT, MOMENTS, SIGMA_SQ_SLOT, tile_columns};

/// Computes SSIM over one output tile (see the module docs for the layout). `sources` holds
/// the images, the mask, the scalars `args` and the `strides`:
///
/// - `img1`, `img2`: `planes` planes of `args.height × args.width`, each of its own storage
///   type (`I1`, `I2`), read as `F`, laid out as `config.input_layout` says (contiguous, or
///   where `strides` places their planes and rows); `config.img2_encoding` says how img2
///   stores its values. The outputs are `F`.
/// - `mask`: under `config.window_mask`, `planes / args.planes_per_mask` planes of weights in
///   [0, 1] of the images' size; every window statistic is then a weighted mean over the
///   window's masked pixels (normalised convolution), and a pixel whose window holds no weight
///   is left out (0 in the map, no partials). Unused otherwise (may be one element).
/// - `tile_sums[cube]` ([`ForwardOutput::TileSums`]): `args.ssim_scale` times the sum of the
///   `term` map over this tile's pixels inside the map region (the whole image, or the
///   `args.crop`-px interior for valid padding), plus, with `l1`, `args.l1_scale` times the sum
///   of |img1 − img2| over its pixels. With the scales set to weight / pixel count, the tile
///   sums add up to the weighted means.
/// - With [`ForwardOutput::Map`], `tile_sums` is instead the map itself,
///   `[planes·height·width]`: at each pixel of the map region `ssim_scale · term` plus, with
///   `l1`, `l1_scale · |img1 − img2|`, and zero elsewhere. Nothing is reduced.
/// - `partials`: with `config.targets = Some(..)`, a `[partial_count, planes·height·width]`
///   stack, stored as `P` (f32, or f16 for half the memory and traffic), of ∂S/∂σ², ∂S/∂σ₁₂
///   and the requested ∂S/∂μ maps (see [`GradTargets`](crate::ssim::GradTargets)); zero
///   outside the map region and where the SSIM value was clamped. Under a window mask each is divided by the pixel's blurred mask, which is
///   what the backward's blur needs. Unused (may be one element) for inference.
/// - With [`ForwardOutput::Moments`], the kernel is the in-slice stage of 3D SSIM instead: it
///   writes the [`MOMENTS`] XY-blurred statistics μ₁, μ₂, E\[x² + y²\], E\[xy\] of every
///   pixel as a `[MOMENTS, planes·height·width]` stack into `partials` (`P = F`), and nothing else
///   (`term`, `l1` and `targets` are ignored, `tile_sums` is untouched; `window_mask` must be
///   off).
///
/// Launch with a `(WALK_COLUMNS, layout.strips)` cube and a
/// `(⌈W / tile_columns(radius)⌉, ⌈H / layout.tile_rows(radius)⌉, planes)` grid.
#[cube(launch, launch_unchecked)]
pub fn ssim_forward_kernel<F: Float, I1: Numeric, I2: Numeric, P: Float>(
    sources: &ForwardSources<F, I1, I2>,
    tile_sums: &mut Tensor<F>,
    partials: &mut Tensor<P>,
    #[comptime] config: ForwardConfig,
    #[define(F, I1, I2, P)] _dtypes: [ElemType; 4],
) {
    let radius = comptime![config.radius];
    let layout = comptime![config.layout];
    let stats = comptime![config.stats()];
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
    let mut quads =
        Shared::<[Quad<F>]>::new_slice(comptime![layout.quad_len(radius, stats).max(1)]);
    // The scalar planes, also the scratch of the tile sum's reduction.
    let mut buffer = Shared::<[F]>::new_slice(comptime![
        layout.scalar_len(radius, stats).max(layout.units())
    ]);
    let mut tile_sum = F::new(0.0);
    let writes = comptime![config.map_writes() + config.partial_writes()];
    // Elements per map: the images' (shape's, whatever their strides).
    let total = sources.img1.len();

    // The last `taps_len` input rows' values, `stats` each, input row `t` of a chunk in slot
    // `t mod taps_len`; the first `2·radius` before the first chunk.
    let mut ring = Array::<F>::new(comptime![stats * taps_len]);
    // The pixels of the chunk's input rows, read one chunk ahead.
    let mut fetched = Fetched::<F, I1, I2>::new(taps_len, comptime![config.window_mask]);
    #[unroll]
    for t in 0..comptime![2 * radius] {
        fetch_pixel::<F, I1, I2>(sources, &mut fetched, 0usize, &at, t, config);
        push_values::<F, I1, I2>(&fetched, 0usize, &mut ring, t, config);
        tile_sum += walk_l1::<F, I1, I2>(&fetched, 0usize, t, args.l1_scale, config);
    }
    fetch_chunk::<F, I1, I2>(sources, &mut fetched, &at, comptime![2 * radius], config);
    for chunk in 0..comptime![layout.chunks] {
        #[unroll]
        for c in 0..taps_len {
            let ring_slot = comptime![(c + 2 * radius) % taps_len];
            push_values::<F, I1, I2>(&fetched, c, &mut ring, ring_slot, config);
            let t = chunk * taps_len + comptime![c + 2 * radius];
            tile_sum += walk_l1::<F, I1, I2>(&fetched, c, t, args.l1_scale, config);
            let v = blur_ring::<F>(&ring, c, radius, config.sigma_bits, stats);
            store_row::<F>(
                &mut quads,
                &mut buffer,
                &v,
                buffer_row + c,
                column,
                radius,
                buffer_rows,
                stats,
            );
        }
        // The next chunk's loads fly while the cube blurs this one across.
        if chunk + 1 < comptime![layout.chunks] {
            fetch_chunk::<F, I1, I2>(
                sources,
                &mut fetched,
                &at,
                (chunk + 1) * taps_len + comptime![2 * radius],
                config,
            );
        }
        sync_cube();
        for round in 0..comptime![rounds(layout, radius)] {
            let item = pair_item(&at, chunk, round, radius, layout);
            // What each of the two pixels stores: the map value first, then the partials or
            // moments.
            let mut outs = Array::<F>::new(comptime![2 * writes.max(1)]);
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
                    stats,
                );
                #[unroll]
                for q in 0..2usize {
                    if item.x + q < args.width && item.y < args.height {
                        valid |= comptime![1u32 << q];
                    }
                    let pixel = output_pixel(&at, &item, q);
                    tile_sum +=
                        finish_pixel::<F, I1, I2>(sources, &mut outs, &blurred, q, &pixel, config);
                }
            }
            let index = at.plane_base + item.y * args.width + item.x;
            if comptime![config.output == ForwardOutput::Map] {
                write_pair::<F, F>(
                    tile_sums,
                    &outs,
                    index,
                    valid,
                    total,
                    comptime![PairValues {
                        first: 0,
                        stride: writes,
                        count: 1,
                    }],
                    config.writes,
                );
            }
            if comptime![config.partial_writes() > 0] {
                write_pair::<F, P>(
                    partials,
                    &outs,
                    index,
                    valid,
                    total,
                    comptime![PairValues {
                        first: config.map_writes(),
                        stride: writes,
                        count: config.partial_writes(),
                    }],
                    config.writes,
                );
            }
        }
        sync_cube();
    }

    // Only a reducing forward has a tile sum to write: the write is left out at expansion (a
    // `terminate!` under a comptime condition did not stop it on wgpu).
    if comptime![config.output == ForwardOutput::TileSums] {
        write_tile_sum::<F>(&mut buffer, tile_sums, tile_sum, comptime![layout.units()]);
    }
}

/// The pixels a walker has read ahead, in their storage types (decoded where they are used):
/// both images, and the mask under a window mask.
#[derive(CubeType)]
struct Fetched<F: Float, I1: Numeric, I2: Numeric> {
    a: Array<I1>,
    b: Array<I2>,
    m: Array<F>,
}

#[cube]
impl<F: Float, I1: Numeric, I2: Numeric> Fetched<F, I1, I2> {
    /// Room for `len` pixels.
    fn new(#[comptime] len: usize, #[comptime] window_mask: bool) -> Self {
        Fetched::<F, I1, I2> {
            a: Array::<I1>::new(len),
            b: Array::<I2>::new(len),
            m: Array::<F>::new(comptime![if window_mask { len } else { 1 }]),
        }
    }
}

/// Reads the `2·radius + 1` input rows of a chunk, from row `first` of the walk on, into
/// `fetched` (see [`fetch_pixel`]).
#[cube]
fn fetch_chunk<F: Float, I1: Numeric, I2: Numeric>(
    sources: &ForwardSources<F, I1, I2>,
    fetched: &mut Fetched<F, I1, I2>,
    at: &WalkPixel,
    first: usize,
    #[comptime] config: ForwardConfig,
) {
    #[unroll]
    for c in 0..comptime![2 * config.radius + 1] {
        fetch_pixel::<F, I1, I2>(sources, fetched, c, at, first + c, config);
    }
}

/// Reads input row `t` of the walk at the unit's column into slot `at_slot` of `fetched`: x, y
/// and, under a window mask, the mask. Outside the image both images are zero and the mask one
/// (zero padding counts as data).
#[cube]
fn fetch_pixel<F: Float, I1: Numeric, I2: Numeric>(
    sources: &ForwardSources<F, I1, I2>,
    fetched: &mut Fetched<F, I1, I2>,
    #[comptime] at_slot: usize,
    at: &WalkPixel,
    t: usize,
    #[comptime] config: ForwardConfig,
) {
    let radius = comptime![config.radius];
    let args = &sources.args;
    let row_r = at.row_r + t;
    let mut a = I1::from_int(0);
    let mut b = I2::from_int(0);
    let mut m = F::new(1.0);
    if at.col_r >= radius
        && at.col_r < args.width + radius
        && row_r >= radius
        && row_r < args.height + radius
    {
        let (row, col) = (row_r - radius, at.col_r - radius);
        let offset = row * args.width + col;
        let index = input_indices(
            at.plane_base + offset,
            at.plane,
            row,
            col,
            &sources.strides,
            comptime![config.input_layout],
        );
        a = sources.img1[index.img1];
        b = sources.img2[index.img2];
        if comptime![config.window_mask] {
            m = sources.mask[at.mask_base + offset];
        }
    }
    fetched.a[at_slot] = a;
    fetched.b[at_slot] = b;
    if comptime![config.window_mask] {
        fetched.m[at_slot] = m;
    }
}

/// Puts the statistics' terms of the pixel in slot `at_slot` of `fetched` into ring slot
/// `ring_slot`: x, y, x² + y², xy, or under a window mask m, m·x, m·y, m·(x² + y²), m·xy.
#[cube]
fn push_values<F: Float, I1: Numeric, I2: Numeric>(
    fetched: &Fetched<F, I1, I2>,
    #[comptime] at_slot: usize,
    ring: &mut Array<F>,
    #[comptime] ring_slot: usize,
    #[comptime] config: ForwardConfig,
) {
    let a = decode_input::<F, I1>(fetched.a[at_slot], InputEncoding::Float);
    let b = decode_input::<F, I2>(fetched.b[at_slot], comptime![config.img2_encoding]);
    let base = comptime![ring_slot * config.stats()];
    if comptime![config.window_mask] {
        let m = fetched.m[at_slot];
        let ma = m * a;
        let mb = m * b;
        ring[base] = m;
        ring[base + 1] = ma;
        ring[base + 2] = mb;
        ring[base + 3] = ma * a + mb * b;
        ring[base + 4] = ma * b;
    } else {
        ring[base] = a;
        ring[base + 1] = b;
        ring[base + 2] = a * a + b * b;
        ring[base + 3] = a * b;
    }
}

/// What walk row `t` of the unit's column adds to the tile sum of the L1 term: `l1_scale ·
/// |img1 − img2|` at the row's pixel (in slot `at_slot` of `fetched`) where the pixel is one of
/// the cube's outputs (its column among the tile's, its row among the walker's) and the
/// reduced L1 term is on ([`ForwardConfig::walk_l1`]); else 0. Pixels outside the image were
/// fetched as zeros and add nothing.
#[cube]
fn walk_l1<F: Float, I1: Numeric, I2: Numeric>(
    fetched: &Fetched<F, I1, I2>,
    #[comptime] at_slot: usize,
    t: usize,
    l1_scale: f32,
    #[comptime] config: ForwardConfig,
) -> F {
    let mut l1 = F::new(0.0);
    if comptime![config.walk_l1()] {
        let radius = comptime![config.radius];
        let column = UNIT_POS_X as usize;
        let own_column = column >= radius && column < comptime![radius + tile_columns(radius)];
        let own_row = t >= radius && t < comptime![radius + config.layout.walk_rows(radius)];
        if own_column && own_row {
            let a = decode_input::<F, I1>(fetched.a[at_slot], InputEncoding::Float);
            let b = decode_input::<F, I2>(fetched.b[at_slot], comptime![config.img2_encoding]);
            l1 = F::cast_from(l1_scale) * F::abs(a - b);
        }
    }
    l1
}

/// Finishes `pixel`, pixel `q` of its pair, from its blurred statistics (`blurred`, the pair's
/// `stats` values each): puts what it stores into its `writes` slots of `outs` (its map value,
/// then its partials or moments, as `config.output` and `config.targets` say) and returns what
/// it adds to the tile sum (zero unless the output is [`ForwardOutput::TileSums`]). A pixel
/// outside the image adds nothing and is not stored.
#[cube]
fn finish_pixel<F: Float, I1: Numeric, I2: Numeric>(
    sources: &ForwardSources<F, I1, I2>,
    outs: &mut Array<F>,
    blurred: &Array<F>,
    #[comptime] q: usize,
    pixel: &OutputPixel,
    #[comptime] config: ForwardConfig,
) -> F {
    let args = &sources.args;
    let out = comptime![q * (config.map_writes() + config.partial_writes())];
    let first = comptime![q * config.stats()];
    let (x, y) = (pixel.x, pixel.y);
    let height = args.height;
    let width = args.width;
    let crop = args.crop;
    // Where μ₁ sits among the blurred statistics: after the blurred mask under a window mask.
    let mu = comptime![first + config.stats() - MOMENTS];
    let partial = comptime![out + config.map_writes()];
    let in_image = x < width && y < height;
    let mut sum = F::new(0.0);
    if comptime![config.output == ForwardOutput::Moments] {
        #[unroll]
        for s in 0..MOMENTS {
            outs[partial + s] = blurred[mu + s];
        }
    } else {
        let mut in_map =
            in_image && x >= crop && y >= crop && x + crop < width && y + crop < height;
        // Under a window mask: the statistics over the window's weight, and none where the
        // window holds no weight.
        let mut inv_weight = F::new(1.0);
        if comptime![config.window_mask] {
            let weight = blurred[first];
            inv_weight = F::new(0.0);
            if weight > F::new(0.0) {
                inv_weight = F::new(1.0) / weight;
            }
            in_map = in_map && weight > F::new(0.0);
        }
        let moments = LocalMoments::<F> {
            mu1: blurred[mu] * inv_weight,
            mu2: blurred[mu + 1] * inv_weight,
            e_sq: blurred[mu + 2] * inv_weight,
            e12: blurred[mu + 3] * inv_weight,
        };
        let terms = ssim_terms::<F>(moments, args.c1, args.c2, comptime![config.term]);
        // |img1 − img2| at the pixel, read again where the map needs it (a reduced L1 term is
        // summed in the walk, see `walk_l1`).
        let mut l1 = F::new(0.0);
        if comptime![config.l1 && !config.walk_l1()] {
            if in_image {
                let index = input_indices(
                    pixel.plane_base + y * width + x,
                    pixel.plane,
                    y,
                    x,
                    &sources.strides,
                    comptime![config.input_layout],
                );
                let a = load_input::<F, I1>(&sources.img1, index.img1, InputEncoding::Float);
                let b =
                    load_input::<F, I2>(&sources.img2, index.img2, comptime![config.img2_encoding]);
                l1 = F::cast_from(args.l1_scale) * F::abs(a - b);
            }
        }
        let mut value = F::new(0.0);
        if in_map {
            value = F::cast_from(args.ssim_scale) * terms.value;
        }
        if comptime![config.output == ForwardOutput::Map] {
            // L1 only inside the map region.
            if in_map {
                value += l1;
            }
            outs[out] = value;
        } else {
            sum = value + l1;
        }
        if comptime![config.targets.is_some()] {
            let targets = comptime![config.targets.unwrap()];
            let keep = F::cast_from(in_map) * inv_weight;
            outs[comptime![partial + SIGMA_SQ_SLOT]] = keep * terms.d_var;
            outs[comptime![partial + COVARIANCE_SLOT]] = keep * terms.d_cov;
            if comptime![targets.img1] {
                outs[comptime![partial + targets.mu1_slot()]] = keep * terms.d_mu1;
            }
            if comptime![targets.img2] {
                outs[comptime![partial + targets.mu2_slot()]] = keep * terms.d_mu2;
            }
        }
    }
    sum
}
