//! The debug views' kernels: colours from each pixel's winning site, site marks on a render, and
//! the 8-bit RGBA pixels a canvas shows. The library's `sad render --view` and the browser
//! viewer (which runs these kernels' WGSL) draw every view with them.

use cubecl::prelude::*;

use super::layout::{DIRECTION, LOG_ANISO, LOG_TAU, SITE_PARAMS};
use super::record::{RANK_X, RECORD_WORDS};

/// Per channel, the multiplier and offset of a cell's hash colour: `0.25 + 0.75 · h / 2¹⁶` with
/// `h` the top 16 bits of `id · a + b` (wrapping u32 arithmetic; multipliers near 2³² over the
/// golden ratio and its kin, so neighbouring ids differ). Integer arithmetic, and every float
/// step exact, so every backend (with or without fused multiply-adds) gives the host's colours
/// bit for bit; a float hash `frac(id · a + b)` jumps from 1 to 0 where an FMA rounds
/// differently.
pub const CELL_HASH: [(u32, u32); 3] = [
    (2_654_435_761, 0x9e37_79b9),
    (2_246_822_519, 0x7f4a_7c15),
    (3_266_489_917, 0x3c6e_f372),
];

/// [`CELL_HASH`]'s colour of site `id` in channel `c` (the host side of `view_colour_kernel`).
pub fn cell_colour(id: u32, c: usize) -> f32 {
    let (a, b) = CELL_HASH[c];
    let h = id.wrapping_mul(a).wrapping_add(b) >> 16;
    0.25 + 0.75 * (h as f32 / 65_536.0)
}
/// The τ ramp: dark blue, teal, yellow.
pub const TAU_RAMP: [[f32; 3]; 3] = [[0.05, 0.03, 0.35], [0.10, 0.62, 0.55], [0.99, 0.90, 0.15]];
/// The grey of a round site in the anisotropy view.
pub const ROUND_GREY: f32 = 0.35;

/// What [`view_colour_kernel()`] colours a pixel by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ViewColours {
    /// A colour per winning site (a hash of its id), black on cell boundaries.
    Cells,
    /// The winning site's log τ on [`TAU_RAMP`], from `lo` to `hi`.
    Tau,
    /// The winning site's anisotropy: grey where round, brighter up to |log anisotropy| = `hi`,
    /// coloured by the long axis (red horizontal, green vertical, blue diagonal).
    Anisotropy,
}

launch_struct! {
    /// The image [`view_colour_kernel()`] writes and its colour scale.
    pub struct ColourView(ColourViewLaunch, ColourViewCompilationArg) {
        /// Image width in pixels.
        pub width: usize,
        /// Image height in pixels.
        pub height: usize,
        /// The colour scale's low end: log τ's least value for [`ViewColours::Tau`], 0 for
        /// [`ViewColours::Anisotropy`].
        pub lo: f32,
        /// The colour scale's high end: log τ's largest value, or the largest |log anisotropy|.
        pub hi: f32,
    }
}

/// Writes `image` (`[3, height, width]`, in [0, 1]) from `winners` (`[height, width]`, a site
/// id or −1) and the sites' parameters `sites` (`[capacity, 10]`), as `colours` says; pixels
/// without a winner are black; `view` gives the size and the colour scale.
///
/// Launch with one unit per pixel, 2D (x across the width).
#[cube(launch, launch_unchecked)]
pub fn view_colour_kernel<F: Float>(
    sites: &Tensor<F>,
    winners: &Tensor<i32>,
    image: &mut Tensor<F>,
    view: ColourView,
    #[comptime] colours: ViewColours,
    #[define(F)] _dtype: ElemType,
) {
    let width = view.width;
    let height = view.height;
    let lo = view.lo;
    let hi = view.hi;
    let x = ABSOLUTE_POS_X as usize;
    let y = ABSOLUTE_POS_Y as usize;
    if x >= width || y >= height {
        terminate!();
    }
    let pixel = y * width + x;
    let plane = width * height;
    let id = winners[pixel];
    let valid = id >= 0;
    let site = if valid { id as usize } else { 0usize };
    let mut colour = Array::<f32>::new(3usize);
    match comptime![colours] {
        ViewColours::Cells => {
            let edge = (x + 1 < width && winners[pixel + 1] != id)
                || (y + 1 < height && winners[pixel + width] != id);
            let keep = valid && !edge;
            let v = u32::cast_from(id);
            #[unroll]
            for c in 0..3 {
                let hashed = v * comptime![CELL_HASH[c].0] + comptime![CELL_HASH[c].1];
                let share = f32::cast_from(hashed >> 16) / 65_536.0f32;
                colour[c] = if keep { share * 0.75 + 0.25 } else { 0.0f32 };
            }
        }
        ViewColours::Tau => {
            let log_tau = f32::cast_from(sites[site * SITE_PARAMS + LOG_TAU]);
            let t = f32::clamp((log_tau - lo) / f32::max(hi - lo, 1e-6), 0.0, 1.0);
            let low = f32::clamp(t * 2.0, 0.0, 1.0);
            let high = f32::clamp(t * 2.0 - 1.0, 0.0, 1.0);
            #[unroll]
            for c in 0..3 {
                let c0 = comptime![TAU_RAMP[0][c]];
                let c1 = comptime![TAU_RAMP[1][c]];
                let c2 = comptime![TAU_RAMP[2][c]];
                let ramp = low * (c1 - c0) + high * (c2 - c1) + c0;
                colour[c] = if valid { ramp } else { 0.0f32 };
            }
        }
        ViewColours::Anisotropy => {
            let log_aniso = f32::cast_from(sites[site * SITE_PARAMS + LOG_ANISO]);
            let v = f32::clamp(f32::abs(log_aniso) / f32::max(hi, 1e-6), 0.0, 1.0);
            let ux = f32::cast_from(sites[site * SITE_PARAMS + DIRECTION]);
            let uy = f32::cast_from(sites[site * SITE_PARAMS + DIRECTION + 1]);
            let mut axis = Array::<f32>::new(3usize);
            axis[0] = ux * ux;
            axis[1] = uy * uy;
            axis[2] = f32::abs(ux * uy * 2.0);
            #[unroll]
            for c in 0..3 {
                let shade = (1.0 - v) * ROUND_GREY + v * axis[c];
                colour[c] = if valid { shade } else { 0.0f32 };
            }
        }
    }
    #[unroll]
    for c in 0..3 {
        image[c * plane + pixel] = F::cast_from(f32::clamp(colour[c], 0.0, 1.0));
    }
}

/// Marks each live site of `records` (`[capacity, RECORD_WORDS]`, see
/// [`pack_sites_kernel`](crate::sad::pack_sites_kernel())) on `image` (`[3, height, width]`,
/// indexed by its strides: a copy may have pitched rows): the
/// 8 pixels around its pixel black (`centre` false), or its pixel white (`centre` true). A
/// site's pixel is its position rounded to the nearest integer point (pixels are evaluated at
/// integer coordinates), clamped to the image; sites more than a pixel outside the image are
/// not marked. Launched for the rings, then for the centres, so a centre wins over another
/// site's ring; marks of one kind write the same value, so their races are harmless.
///
/// Launch with one unit per site, 1D.
#[cube(launch, launch_unchecked)]
pub fn mark_sites_kernel<F: Float>(
    records: &Tensor<u32>,
    image: &mut Tensor<F>,
    width: usize,
    height: usize,
    site_count: usize,
    #[comptime] centre: bool,
    #[define(F)] _dtype: ElemType,
) {
    let site = ABSOLUTE_POS;
    if site >= site_count {
        terminate!();
    }
    let x = f32::reinterpret(records[site * RECORD_WORDS + RANK_X]);
    let y = f32::reinterpret(records[site * RECORD_WORDS + RANK_X + 1]);
    let w = f32::cast_from(width);
    let h = f32::cast_from(height);
    // Inactive sites (x = DEAD_X) are outside too.
    if x >= -1.0f32 && y >= -1.0f32 && x <= w && y <= h {
        let px = i32::cast_from(f32::floor(x + 0.5f32));
        let py = i32::cast_from(f32::floor(y + 0.5f32));
        let (plane, row) = (image.stride(0), image.stride(1));
        let value = if comptime![centre] {
            F::new(1.0)
        } else {
            F::new(0.0)
        };
        // The 3 × 3 block around the site's pixel: the centre, or the 8 others.
        #[unroll]
        for j in 0..3 {
            #[unroll]
            for i in 0..3 {
                if comptime![(i == 1 && j == 1) == centre] {
                    let mx = i32::clamp(px + comptime![i - 1], 0, width as i32 - 1);
                    let my = i32::clamp(py + comptime![j - 1], 0, height as i32 - 1);
                    let at = my as usize * row + mx as usize * image.stride(2);
                    #[unroll]
                    for c in 0..3 {
                        image[c * plane + at] = value;
                    }
                }
            }
        }
    }
}

/// Writes `rgba` (`[height · width]` u32) from `image` (`[3, height, width]`): each channel
/// clamped to [0, 1] and rounded to 8 bits (half up, as the library's PNG writer rounds), red in
/// the lowest byte and alpha 255, the byte order of a canvas's `ImageData`.
///
/// Launch with one unit per pixel, 1D.
#[cube(launch, launch_unchecked)]
pub fn rgba_kernel<F: Float>(
    image: &Tensor<F>,
    rgba: &mut Tensor<u32>,
    pixels: usize,
    #[define(F)] _dtype: ElemType,
) {
    let pixel = ABSOLUTE_POS;
    if pixel >= pixels {
        terminate!();
    }
    let mut packed = (255u32 << 24).runtime();
    #[unroll]
    for c in 0..3 {
        let v = f32::clamp(f32::cast_from(image[c * pixels + pixel]), 0.0, 1.0);
        packed |= u32::cast_from(f32::floor(v * 255.0 + 0.5)) << comptime![8 * c as u32];
    }
    rgba[pixel] = packed;
}
