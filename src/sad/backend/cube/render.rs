//! Launches of the render kernel and of its backward.

use burn::backend::cubecl::dtype_to_storage_type;
use burn::tensor::{DType, Shape};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::sad::{
    BackwardOutputs, render_backward_kernel, render_kernel, winner_kernel,
};

use super::{
    candidates, empty_f32, empty_i32, expect_sites_and_lists, full_plane_masks, ids, image_grid,
    image_grid_cubes, occupancy, pixel_grid, plane_sums, table_sums,
};
use crate::runtime::launch::{expect_dims, launch_kernel};
use crate::sad::{BackwardStrategy, RenderGeometry, SadBackend};

/// The render kernel over full site `records` (`[capacity, RECORD_WORDS]`, contiguous) and
/// checked candidate lists. Every pixel is written; the image is allocated contiguous, as the
/// kernel indexes it linearly and `float_zeros` may hand out pitched rows.
pub(super) fn render_records(
    records: CubeTensor,
    candidates: CubeTensor,
    geometry: RenderGeometry,
) -> CubeTensor {
    let image = empty_f32(&records, Shape::new([3, geometry.height, geometry.width]));
    let (count, dim) = image_grid(geometry);
    launch_kernel!(render_kernel(
        &records.client,
        count,
        dim,
        candidates::record_vector_size(),
        records.clone().into_tensor_arg(),
        candidates.into_tensor_arg(),
        image.clone().into_tensor_arg(),
        pixel_grid(geometry, &records),
        dtype_to_storage_type(DType::F32),
    ));
    image
}

/// The winner kernel over full site `records` and checked candidate lists: `[height, width]`
/// i32, every pixel written.
pub(super) fn winners(
    records: CubeTensor,
    candidates: CubeTensor,
    geometry: RenderGeometry,
) -> CubeTensor {
    let winners = empty_i32(&records, Shape::new([geometry.height, geometry.width]));
    let (count, dim) = image_grid(geometry);
    launch_kernel!(winner_kernel(
        &records.client,
        count,
        dim,
        candidates::record_vector_size(),
        records.clone().into_tensor_arg(),
        candidates.into_tensor_arg(),
        winners.clone().into_tensor_arg(),
        pixel_grid(geometry, &records),
        dtype_to_storage_type(DType::F32),
    ));
    winners
}

/// The backward kernel, from ∂L/∂image or (`from_target`) from the target of a summed squared
/// error, with the removal delta as an extra column if asked for.
pub(super) fn backward(
    sites: CubeTensor,
    candidates: CubeTensor,
    image: CubeTensor,
    geometry: RenderGeometry,
    outputs: BackwardOutputs,
    strategy: BackwardStrategy,
) -> CubeTensor {
    let sites = into_contiguous(sites);
    let candidates = ids(candidates);
    let image = into_contiguous(image);
    expect_sites_and_lists("sad_render_backward", &sites, &candidates, geometry);
    expect_dims(
        "sad_render_backward",
        "the image gradient (or target)",
        &image,
        &[3, geometry.height, geometry.width],
    );
    let (records, grads) = candidates::site_records_and_zeros(&sites, outputs.columns());
    let (count, dim) = image_grid(geometry);
    let cubes_per_sm = occupancy::backward_cubes_per_sm(&sites, image_grid_cubes(geometry));
    let plane_sums = plane_sums(&sites, strategy);
    let full_masks = full_plane_masks(&sites, plane_sums);
    launch_kernel!(render_backward_kernel(
        &sites.client,
        count,
        dim,
        candidates::record_vector_size(),
        records.into_tensor_arg(),
        candidates.into_tensor_arg(),
        image.into_tensor_arg(),
        grads.clone().into_tensor_arg(),
        pixel_grid(geometry, &sites),
        outputs,
        table_sums(&sites, outputs.from_target),
        plane_sums,
        cubes_per_sm,
        full_masks,
        dtype_to_storage_type(sites.dtype),
    ));
    grads
}

impl SadBackend for CubeBackend {
    fn sad_render(
        sites: CubeTensor,
        candidates: CubeTensor,
        geometry: RenderGeometry,
        _strategy: BackwardStrategy,
    ) -> CubeTensor {
        let sites = into_contiguous(sites);
        let candidates = ids(candidates);
        expect_sites_and_lists("sad_render", &sites, &candidates, geometry);
        render_records(candidates::site_records(&sites), candidates, geometry)
    }

    fn sad_render_backward(
        sites: CubeTensor,
        candidates: CubeTensor,
        grad_image: CubeTensor,
        geometry: RenderGeometry,
        strategy: BackwardStrategy,
    ) -> CubeTensor {
        let outputs = BackwardOutputs {
            from_target: false,
            removal: false,
        };
        backward(sites, candidates, grad_image, geometry, outputs, strategy)
    }
}
