//! Which site wins each pixel: the debug views of a render (cells, τ, anisotropy) colour a
//! pixel by the site with the largest blend weight there.

use cubecl::prelude::*;

use super::grid::PixelGrid;

use super::blend::blend_weights;
use super::layout::{EMPTY, K};
use super::render::cell_of_pixel;

/// Writes `winners` (`[height, width]`, row-major) with the id of the live site of largest
/// softmax weight in each pixel's blend (the first such slot where weights tie), or −1 where a
/// pixel has no live candidate. The blend is the forward render's, from the sites' full
/// records (see [`pack_sites_kernel`](crate::sad::pack_sites_kernel())).
///
/// Launch with `(TILE, TILE)` cubes over the image.
#[cube(launch, launch_unchecked)]
pub fn winner_kernel<F: Float, N: Size>(
    records: &Tensor<Vector<u32, N>>,
    candidates: &Tensor<Vector<i32, N>>,
    winners: &mut Tensor<i32>,
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
    let mut winner = 0i32;
    let mut found = false;
    let mut best = F::new(-1.0);
    #[unroll]
    for k in 0..K {
        if blend.live[k] && blend.weights[k] > best {
            best = blend.weights[k];
            winner = i32::cast_from(blend.ids[k]);
            found = true;
        }
    }
    winners[y * grid.width + x] = if found { winner } else { EMPTY };
}
