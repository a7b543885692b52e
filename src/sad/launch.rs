//! Launches of the SAD kernels on the CubeCL backend (every runtime).

use burn::backend::{TensorMetadata, cubecl::dtype_to_storage_type, ops::IntTensorOps};
use burn::tensor::{DType, IntDType, Shape};
use burn_cubecl::{
    CubeBackend, kernel::into_contiguous, ops::numeric::empty_device_contiguous_dtype,
    tensor::CubeTensor,
};
use burn_sad_kernels::sad::{
    K, SITE_PARAMS, TILE, candidate_pass_kernel, clear_kernel, init_candidates_kernel,
    jfa_flood_kernel, render_backward_kernel, render_kernel, seed_candidates_kernel,
};
use cubecl::{CubeCount, CubeDim};

use super::{PassConfig, RenderGeometry, SadBackend};

/// Units per side of the cubes of the per-cell candidate kernels.
const CELL_TILE: u32 = 16;

fn image_grid(geometry: RenderGeometry) -> (CubeCount, CubeDim) {
    (
        CubeCount::Static(
            geometry.width.div_ceil(TILE) as u32,
            geometry.height.div_ceil(TILE) as u32,
            1,
        ),
        CubeDim::new_2d(TILE as u32, TILE as u32),
    )
}

fn cell_grid(geometry: RenderGeometry) -> (CubeCount, CubeDim) {
    (
        CubeCount::Static(
            (geometry.cand_w() as u32).div_ceil(CELL_TILE),
            (geometry.cand_h() as u32).div_ceil(CELL_TILE),
            1,
        ),
        CubeDim::new_2d(CELL_TILE, CELL_TILE),
    )
}

fn capacity(sites: &CubeTensor) -> usize {
    sites.shape()[0]
}

/// Candidate ids as contiguous i32, whatever int type they arrived in.
fn ids(candidates: CubeTensor) -> CubeTensor {
    let candidates = if candidates.dtype == DType::I32 {
        candidates
    } else {
        CubeBackend::int_cast(candidates, IntDType::I32)
    };
    into_contiguous(candidates)
}

fn empty_f32(like: &CubeTensor, shape: Shape) -> CubeTensor {
    empty_device_contiguous_dtype(like.client.clone(), like.device.clone(), shape, DType::F32)
}

fn empty_ids(sites: &CubeTensor, geometry: RenderGeometry) -> CubeTensor {
    CubeBackend::int_full(
        Shape::new([geometry.cells(), K]),
        (-1i32).into(),
        &sites.device,
        IntDType::I32,
    )
}

impl SadBackend for CubeBackend {
    fn sad_render(
        sites: CubeTensor,
        candidates: CubeTensor,
        geometry: RenderGeometry,
    ) -> CubeTensor {
        let sites = into_contiguous(sites);
        let candidates = ids(candidates);
        // Every pixel is written. Allocated contiguous: the kernels index linearly, and
        // `float_zeros` may hand out pitched rows.
        let image = empty_f32(&sites, Shape::new([3, geometry.height, geometry.width]));
        let (count, dim) = image_grid(geometry);
        render_kernel::launch(
            &sites.client,
            count,
            dim,
            sites.clone().into_tensor_arg(),
            candidates.into_tensor_arg(),
            image.clone().into_tensor_arg(),
            geometry.width,
            geometry.height,
            geometry.cand_w(),
            geometry.cand_h(),
            capacity(&sites),
            geometry.inv_scale_sq(),
            dtype_to_storage_type(sites.dtype),
        );
        image
    }

    fn sad_render_backward(
        sites: CubeTensor,
        candidates: CubeTensor,
        grad_image: CubeTensor,
        geometry: RenderGeometry,
    ) -> CubeTensor {
        let sites = into_contiguous(sites);
        let candidates = ids(candidates);
        let grad_image = into_contiguous(grad_image);
        let grads = empty_f32(&sites, Shape::new([capacity(&sites), SITE_PARAMS]));
        let elements = capacity(&sites) * SITE_PARAMS;
        clear_kernel::launch(
            &sites.client,
            CubeCount::Static((elements as u32).div_ceil(256), 1, 1),
            CubeDim::new_1d(256),
            grads.clone().into_tensor_arg(),
            dtype_to_storage_type(grads.dtype),
        );
        let (count, dim) = image_grid(geometry);
        render_backward_kernel::launch(
            &sites.client,
            count,
            dim,
            sites.clone().into_tensor_arg(),
            candidates.into_tensor_arg(),
            grad_image.into_tensor_arg(),
            grads.clone().into_tensor_arg(),
            geometry.width,
            geometry.height,
            geometry.cand_w(),
            geometry.cand_h(),
            capacity(&sites),
            geometry.inv_scale_sq(),
            dtype_to_storage_type(sites.dtype),
        );
        grads
    }

    fn sad_init_candidates(sites: CubeTensor, geometry: RenderGeometry, seed: u32) -> CubeTensor {
        let sites = into_contiguous(sites);
        let candidates = empty_ids(&sites, geometry);
        let (count, dim) = cell_grid(geometry);
        init_candidates_kernel::launch(
            &sites.client,
            count,
            dim,
            candidates.clone().into_tensor_arg(),
            geometry.cand_w(),
            geometry.cand_h(),
            capacity(&sites) as u32,
            seed,
        );
        seed_sites(&sites, &candidates, geometry);
        candidates
    }

    fn sad_flood_candidates(sites: CubeTensor, geometry: RenderGeometry) -> CubeTensor {
        let sites = into_contiguous(sites);
        let candidates = empty_ids(&sites, geometry);
        seed_sites(&sites, &candidates, geometry);
        let (count, dim) = cell_grid(geometry);
        let top = geometry.cand_w().max(geometry.cand_h()).next_power_of_two() as u32;
        let mut step = top / 2;
        let mut read_half = 0u32;
        while step >= 1 {
            jfa_flood_kernel::launch(
                &sites.client,
                count.clone(),
                dim,
                sites.clone().into_tensor_arg(),
                candidates.clone().into_tensor_arg(),
                geometry.cand_w(),
                geometry.cand_h(),
                geometry.width,
                geometry.height,
                geometry.downscale.max(1),
                capacity(&sites),
                step,
                read_half,
                geometry.inv_scale_sq(),
                dtype_to_storage_type(sites.dtype),
            );
            read_half ^= 1;
            step /= 2;
        }
        if read_half == 1 {
            // The result sits in slots 4..8; the reference copies it over slots 0..4 and keeps
            // the copy in 4..8 as well.
            let upper = CubeBackend::int_slice(
                candidates.clone(),
                &[
                    burn::tensor::Slice::new(0, None, 1),
                    burn::tensor::Slice::new(4, Some(8), 1),
                ],
            );
            return CubeBackend::int_cat(vec![upper.clone(), upper], 1);
        }
        candidates
    }

    fn sad_candidate_pass(
        sites: CubeTensor,
        candidates: CubeTensor,
        hilbert_order: CubeTensor,
        hilbert_rank: CubeTensor,
        geometry: RenderGeometry,
        pass: PassConfig,
    ) -> CubeTensor {
        let sites = into_contiguous(sites);
        let input = ids(candidates);
        let hilbert_order = ids(hilbert_order);
        let hilbert_rank = ids(hilbert_rank);
        let output = empty_ids(&sites, geometry);
        let (count, dim) = cell_grid(geometry);
        candidate_pass_kernel::launch(
            &sites.client,
            count,
            dim,
            sites.clone().into_tensor_arg(),
            input.into_tensor_arg(),
            output.clone().into_tensor_arg(),
            hilbert_order.into_tensor_arg(),
            hilbert_rank.into_tensor_arg(),
            geometry.cand_w(),
            geometry.cand_h(),
            geometry.width,
            geometry.height,
            geometry.downscale.max(1),
            capacity(&sites),
            pass.jump,
            pass.pass,
            pass.inject,
            pass.hilbert_probes,
            pass.hilbert_window,
            geometry.inv_scale_sq(),
            dtype_to_storage_type(sites.dtype),
        );
        output
    }
}

/// Writes every active site into slot 0 of its cell.
fn seed_sites(sites: &CubeTensor, candidates: &CubeTensor, geometry: RenderGeometry) {
    let count = capacity(sites);
    seed_candidates_kernel::launch(
        &sites.client,
        CubeCount::Static((count as u32).div_ceil(256), 1, 1),
        CubeDim::new_1d(256),
        sites.clone().into_tensor_arg(),
        candidates.clone().into_tensor_arg(),
        geometry.cand_w(),
        geometry.cand_h(),
        count,
        1.0 / geometry.downscale.max(1) as f32,
        dtype_to_storage_type(sites.dtype),
    );
}
