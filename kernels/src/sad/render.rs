//! Forward render: each pixel is the softmax blend of its cell's K candidate sites.

use cubecl::prelude::*;

use super::grid::PixelGrid;

use super::blend::blend_weights;
use super::layout::K;
use super::record::read_colour;

/// The cell of the candidate grid that pixel (`x`, `y`) reads.
#[cube]
pub fn cell_of_pixel(
    x: usize,
    y: usize,
    width: usize,
    height: usize,
    cand_w: usize,
    cand_h: usize,
) -> usize {
    let cx = usize::min(x * cand_w / width, cand_w - 1);
    let cy = usize::min(y * cand_h / height, cand_h - 1);
    cy * cand_w + cx
}

/// Renders `image` (`[3, height, width]`, planar RGB, not clamped) from the sites' full records
/// (see [`pack_sites_kernel`](crate::sad::pack_sites_kernel())).
///
/// For pixel (x, y) at point q = (x, y) (integer coordinates, as the reference), slot k of its
/// cell holds site i_k; the logit is z_k = −e^{log τ}·s_k, and the colour is
/// Σ_k softmax(z)_k · c_{i_k}, the softmax taken with max subtraction over the live slots only.
/// A pixel without any live candidate is black. Duplicate ids count once per slot.
///
/// Launch with `(TILE, TILE)` cubes over the image.
#[cube(launch, launch_unchecked)]
pub fn render_kernel<F: Float, N: Size>(
    records: &Tensor<Vector<u32, N>>,
    candidates: &Tensor<Vector<i32, N>>,
    image: &mut Tensor<F>,
    grid: PixelGrid,
    #[define(F)] _dtype: ElemType,
) {
    let x = CUBE_POS_X as usize * CUBE_DIM_X as usize + UNIT_POS_X as usize;
    let y = CUBE_POS_Y as usize * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    if x >= grid.width || y >= grid.height {
        terminate!();
    }
    let cell = cell_of_pixel(x, y, grid.width, grid.height, grid.cand_w, grid.cand_h);

    let blend = blend_weights::<F, N>(
        records,
        candidates,
        &grid,
        cell,
        F::cast_from(x),
        F::cast_from(y),
        false,
    );
    let plane = grid.height * grid.width;
    let pixel = y * grid.width + x;
    let mut r = F::new(0.0);
    let mut g = F::new(0.0);
    let mut b = F::new(0.0);
    if blend.any {
        #[unroll]
        for k in 0..K {
            let w = blend.weights[k];
            if blend.live[k] && F::abs(w) <= F::new(f32::MAX) {
                let colour = read_colour::<F, N>(records, blend.ids[k]);
                r += w * colour[0];
                g += w * colour[1];
                b += w * colour[2];
            }
        }
    }
    image[pixel] = r;
    image[plane + pixel] = g;
    image[2 * plane + pixel] = b;
}
