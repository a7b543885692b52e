//! Forward kernel: SSIM over one tile of one plane, reduced to a single sum, and (in training)
//! the per-pixel partial derivatives of SSIM with respect to the local moments.

use cubecl::prelude::*;

use super::args::{ForwardArgs, ForwardConfig, ForwardOutput, InputStrides};
use super::epilogue::ssim_terms;
use super::index::input_indices;
use super::load::{InputEncoding, load_input};
use super::reduce::write_tile_sum;
use super::ring::blur_ring;
use super::stage::pass_texel;
use super::window::gaussian_taps;
use super::{COLUMNS, COVARIANCE_SLOT, SIGMA_SQ_SLOT};

/// Computes SSIM over one output tile (see the module docs for the layout).
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
///   stack of ∂S/∂σ², ∂S/∂σ₁₂ and the requested ∂S/∂μ maps (see
///   [`GradTargets`](crate::ssim::GradTargets)); zero outside the map region and where the SSIM value
///   was clamped. Under a window mask each is divided by the pixel's blurred mask, which is
///   what the backward's blur needs. Unused (may be one element) for inference.
/// - With [`ForwardOutput::Moments`], the kernel is the in-slice stage of 3D SSIM instead: it
///   writes the five XY-blurred statistics μ₁, μ₂, E\[x²\], E\[y²\], E\[xy\] of every
///   pixel as a `[5, planes·height·width]` stack into `partials`, and nothing else (`term`,
///   `l1` and `targets` are ignored, `tile_sums` is untouched; `window_mask` must be off).
///
/// Launch with a `(COLUMNS, layout.strips)` cube and a
/// `(⌈W / COLUMNS⌉, ⌈H / layout.tile_rows()⌉, planes)` grid.
#[cube(launch, launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn ssim_forward_kernel<F: Float, I1: Numeric, I2: Numeric>(
    img1: &Tensor<I1>,
    img2: &Tensor<I2>,
    mask: &Tensor<F>,
    tile_sums: &mut Tensor<F>,
    partials: &mut Tensor<F>,
    args: ForwardArgs,
    strides: InputStrides,
    #[comptime] config: ForwardConfig,
    #[define(F, I1, I2)] _dtypes: [ElemType; 3],
) {
    let radius = comptime![config.radius];
    let layout = comptime![config.layout];
    let masked = comptime![config.window_mask];
    let maps = comptime![ForwardConfig::staged_maps(config.window_mask)];
    let stats = comptime![config.stats()];
    // Where μ₁ sits among the blurred statistics: after the blurred mask under a window mask.
    let first = comptime![stats - 5];
    let taps = comptime![gaussian_taps(radius, config.sigma_bits)];
    let taps_len = comptime![2 * radius + 1];
    let span_x = comptime![COLUMNS + 2 * radius];
    let span_y = comptime![layout.tile_rows() + 2 * radius];
    let height = args.height;
    let width = args.width;
    let crop = args.crop;
    let unit = UNIT_POS as usize;
    let column = UNIT_POS_X as usize;
    let strip = UNIT_POS_Y as usize;
    let x0 = CUBE_POS_X as usize * COLUMNS;
    let y0 = CUBE_POS_Y as usize * comptime![layout.tile_rows()];
    let plane = CUBE_POS_Z as usize;
    let plane_base = plane * height * width;
    let mask_base = (plane / args.planes_per_mask) * height * width;

    // Stage the tile and its apron, interleaved: both images (zero outside the image) and
    // under a window mask the mask (one outside the image: the zero padding counts as data).
    // Unit `u` stages texels `u + k·units`, in an unrolled loop whose texel coordinates step
    // by a comptime offset: no division per texel, and the loads of every pass can be issued
    // before the stores wait for them.
    let mut pixels = Shared::<[F]>::new_slice(comptime![layout.staged_len(radius, maps)]);
    let units = comptime![layout.units()];
    let texels = comptime![span_x * span_y];
    let unit_row = unit / span_x;
    let unit_col = unit % span_x;
    #[unroll]
    for pass in 0..comptime![texels.div_ceil(units)] {
        let step = comptime![pass * units];
        let texel = pass_texel(unit_row, unit_col, step, span_x);
        let sy = texel.row;
        let gy = y0 + sy;
        let gx = x0 + texel.col;
        let mut a = F::new(0.0);
        let mut b = F::new(0.0);
        let mut m = F::new(1.0);
        let on_image = sy < span_y
            && gy >= radius
            && gy < height + radius
            && gx >= radius
            && gx < width + radius;
        if on_image {
            let (row, col) = (gy - radius, gx - radius);
            let offset = row * width + col;
            let at = input_indices(
                plane_base + offset,
                plane,
                row,
                col,
                &strides,
                comptime![config.input_layout],
            );
            a = load_input::<F, I1>(img1, at.img1, InputEncoding::Float);
            b = load_input::<F, I2>(img2, at.img2, comptime![config.img2_encoding]);
            if comptime![masked] {
                m = mask[mask_base + offset];
            }
        }
        let i = unit + step;
        if i < texels {
            pixels[maps * i] = a;
            pixels[maps * i + 1] = b;
            if comptime![masked] {
                pixels[maps * i + 2] = m;
            }
        }
    }
    sync_cube();

    let x = x0 + column;
    let first_row = strip * comptime![layout.rows];
    // Elements per map: the images' (shape's, whatever their strides).
    let total = img1.len();
    let mut tile_sum = F::new(0.0);
    // The last `taps_len` horizontally blurred rows, `stats` values each, slot = row % taps_len.
    let mut ring = Array::<F>::new(comptime![stats * taps_len]);
    #[unroll]
    for r in 0..comptime![layout.rows + 2 * radius] {
        // Horizontal blur of staged row `first_row + r` at this unit's column.
        let centre = (first_row + r) * span_x + column + radius;
        let slot = comptime![(r % taps_len) * stats];
        if comptime![masked] {
            horizontal_masked::<F>(&pixels, &mut ring, centre, slot, radius, config.sigma_bits);
        } else {
            let w0 = F::new(comptime![taps[0]]);
            let a = pixels[2 * centre];
            let b = pixels[2 * centre + 1];
            let mut sa = w0 * a;
            let mut sb = w0 * b;
            let mut saa = w0 * a * a;
            let mut sbb = w0 * b * b;
            let mut sab = w0 * a * b;
            #[unroll]
            for d in 1..comptime![radius + 1] {
                let w = F::new(comptime![taps[d]]);
                let la = pixels[2 * (centre - d)];
                let lb = pixels[2 * (centre - d) + 1];
                let ra = pixels[2 * (centre + d)];
                let rb = pixels[2 * (centre + d) + 1];
                sa += w * (la + ra);
                sb += w * (lb + rb);
                saa += w * (la * la + ra * ra);
                sbb += w * (lb * lb + rb * rb);
                sab += w * (la * lb + ra * rb);
            }
            ring[slot] = sa;
            ring[slot + 1] = sb;
            ring[slot + 2] = saa;
            ring[slot + 3] = sbb;
            ring[slot + 4] = sab;
        }

        // Once the window below output row `r − 2·radius` is complete, blur vertically.
        if comptime![r >= 2 * radius] {
            let out = comptime![r - 2 * radius];
            let v = blur_ring::<F>(&ring, out, radius, config.sigma_bits, stats);
            let y = y0 + first_row + out;
            let in_image = x < width && y < height;
            if comptime![config.output == ForwardOutput::Moments] {
                if in_image {
                    let idx = plane_base + y * width + x;
                    #[unroll]
                    for s in 0..5 {
                        partials[s * total + idx] = v[first + s];
                    }
                }
            } else {
                let mut in_map =
                    in_image && x >= crop && y >= crop && x + crop < width && y + crop < height;
                // Under a window mask: the statistics over the window's weight, and none
                // where the window holds no weight.
                let mut inv_weight = F::new(1.0);
                if comptime![masked] {
                    inv_weight = F::new(0.0);
                    if v[0] > F::new(0.0) {
                        inv_weight = F::new(1.0) / v[0];
                    }
                    in_map = in_map && v[0] > F::new(0.0);
                }
                let terms = ssim_terms::<F>(
                    v[first] * inv_weight,
                    v[first + 1] * inv_weight,
                    v[first + 2] * inv_weight,
                    v[first + 3] * inv_weight,
                    v[first + 4] * inv_weight,
                    args.c1,
                    args.c2,
                    comptime![config.term],
                );
                if comptime![config.output == ForwardOutput::Map] {
                    if in_image {
                        let mut value = F::new(0.0);
                        if in_map {
                            value = F::cast_from(args.ssim_scale) * terms.value;
                            if comptime![config.l1] {
                                let texel =
                                    maps * ((first_row + out + radius) * span_x + column + radius);
                                value += F::cast_from(args.l1_scale)
                                    * F::abs(pixels[texel] - pixels[texel + 1]);
                            }
                        }
                        tile_sums[plane_base + y * width + x] = value;
                    }
                } else {
                    if in_map {
                        tile_sum += F::cast_from(args.ssim_scale) * terms.value;
                    }
                    if comptime![config.l1] {
                        if in_image {
                            let texel =
                                maps * ((first_row + out + radius) * span_x + column + radius);
                            tile_sum += F::cast_from(args.l1_scale)
                                * F::abs(pixels[texel] - pixels[texel + 1]);
                        }
                    }
                }
                if comptime![config.targets.is_some()] {
                    let targets = comptime![config.targets.unwrap()];
                    if in_image {
                        let idx = plane_base + y * width + x;
                        let keep = F::cast_from(in_map) * inv_weight;
                        partials[comptime![SIGMA_SQ_SLOT] * total + idx] = keep * terms.d_var;
                        partials[comptime![COVARIANCE_SLOT] * total + idx] = keep * terms.d_cov;
                        if comptime![targets.img1] {
                            partials[comptime![targets.mu1_slot()] * total + idx] =
                                keep * terms.d_mu1;
                        }
                        if comptime![targets.img2] {
                            partials[comptime![targets.mu2_slot()] * total + idx] =
                                keep * terms.d_mu2;
                        }
                    }
                }
            }
        }
    }

    // Only a reducing forward has a tile sum to write: the write is left out at expansion (a
    // `terminate!` under a comptime condition did not stop it on wgpu).
    if comptime![config.output == ForwardOutput::TileSums] {
        write_tile_sum::<F>(&mut pixels, tile_sums, tile_sum, comptime![layout.units()]);
    }
}

/// The horizontal blur of one staged row under a window mask, at staged texel `centre`
/// (`(a, b, m)` interleaved): the blurred m, m·a, m·b, m·a², m·b², m·ab into
/// `ring[slot..slot + 6]`.
#[cube]
fn horizontal_masked<F: Float>(
    pixels: &Shared<[F]>,
    ring: &mut Array<F>,
    centre: usize,
    #[comptime] slot: usize,
    #[comptime] radius: usize,
    #[comptime] sigma_bits: u32,
) {
    let taps = comptime![gaussian_taps(radius, sigma_bits)];
    let w0 = F::new(comptime![taps[0]]);
    let a = pixels[3 * centre];
    let b = pixels[3 * centre + 1];
    let m = pixels[3 * centre + 2];
    let ma = m * a;
    let mb = m * b;
    let mut sm = w0 * m;
    let mut sa = w0 * ma;
    let mut sb = w0 * mb;
    let mut saa = w0 * ma * a;
    let mut sbb = w0 * mb * b;
    let mut sab = w0 * ma * b;
    #[unroll]
    for d in 1..comptime![radius + 1] {
        let w = F::new(comptime![taps[d]]);
        let la = pixels[3 * (centre - d)];
        let lb = pixels[3 * (centre - d) + 1];
        let lm = pixels[3 * (centre - d) + 2];
        let ra = pixels[3 * (centre + d)];
        let rb = pixels[3 * (centre + d) + 1];
        let rm = pixels[3 * (centre + d) + 2];
        let lma = lm * la;
        let lmb = lm * lb;
        let rma = rm * ra;
        let rmb = rm * rb;
        sm += w * (lm + rm);
        sa += w * (lma + rma);
        sb += w * (lmb + rmb);
        saa += w * (lma * la + rma * ra);
        sbb += w * (lmb * lb + rmb * rb);
        sab += w * (lma * lb + rma * rb);
    }
    ring[slot] = sm;
    ring[slot + 1] = sa;
    ring[slot + 2] = sb;
    ring[slot + 3] = saa;
    ring[slot + 4] = sbb;
    ring[slot + 5] = sab;
}
