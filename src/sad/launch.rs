//! Launches of the SAD kernels on the CubeCL backend (every runtime).

use burn::backend::{TensorMetadata, cubecl::dtype_to_storage_type, ops::IntTensorOps};
use burn::tensor::{DType, IntDType, Shape};
use burn_cubecl::{
    CubeBackend, kernel::into_contiguous, ops::numeric::empty_device_contiguous_dtype,
    tensor::CubeTensor,
};
use burn_sad_kernels::sad::{
    ADAM_STATE, AdamStep, AdamStepLaunch, K, LOG_TAU, SITE_PARAMS, StatisticsKind, TILE,
    adam_kernel, candidate_pass_kernel, clear_kernel, init_candidates_kernel, jfa_flood_kernel,
    render_backward_kernel, render_kernel, seed_candidates_kernel, site_statistics_kernel,
    tau_diffusion_kernel,
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

fn site_grid(sites: usize) -> (CubeCount, CubeDim) {
    (
        CubeCount::Static((sites as u32).div_ceil(256).max(1), 1, 1),
        CubeDim::new_1d(256),
    )
}

/// A zeroed contiguous f32 accumulator of `shape`.
fn zeros_f32(like: &CubeTensor, shape: Shape) -> CubeTensor {
    let values = empty_f32(like, shape);
    let (count, dim) = site_grid(values.shape().num_elements());
    clear_kernel::launch(
        &like.client,
        count,
        dim,
        values.clone().into_tensor_arg(),
        dtype_to_storage_type(values.dtype),
    );
    values
}

/// Whether the runtime has float atomics in shared memory (CUDA and HIP do; WGSL does not).
fn native_shared_atomics(tensor: &CubeTensor) -> bool {
    matches!(tensor.client.name(), "cuda" | "hip")
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
        backward(sites, candidates, grad_image, geometry, false)
    }

    fn sad_squared_error_gradients(
        sites: CubeTensor,
        candidates: CubeTensor,
        target: CubeTensor,
        geometry: RenderGeometry,
    ) -> CubeTensor {
        backward(sites, candidates, target, geometry, true)
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

    fn sad_site_statistics(
        sites: CubeTensor,
        candidates: CubeTensor,
        target: CubeTensor,
        geometry: RenderGeometry,
        kind: StatisticsKind,
    ) -> CubeTensor {
        let sites = into_contiguous(sites);
        let candidates = ids(candidates);
        let target = into_contiguous(target);
        let stats = zeros_f32(&sites, Shape::new([capacity(&sites), kind.channels()]));
        let (count, dim) = image_grid(geometry);
        site_statistics_kernel::launch(
            &sites.client,
            count,
            dim,
            sites.clone().into_tensor_arg(),
            candidates.into_tensor_arg(),
            target.into_tensor_arg(),
            stats.clone().into_tensor_arg(),
            geometry.width,
            geometry.height,
            geometry.cand_w(),
            geometry.cand_h(),
            capacity(&sites),
            geometry.inv_scale_sq(),
            kind,
            native_shared_atomics(&sites),
            dtype_to_storage_type(sites.dtype),
        );
        stats
    }

    fn sad_tau_diffusion(
        sites: CubeTensor,
        candidates: CubeTensor,
        grads: CubeTensor,
        geometry: RenderGeometry,
        lambda: f32,
        passes: u32,
    ) -> CubeTensor {
        let sites = into_contiguous(sites);
        let candidates = ids(candidates);
        let grads = into_contiguous(grads);
        let count_sites = capacity(&sites);
        let (count, dim) = site_grid(count_sites);
        // The first pass reads the log τ column of the gradients; zero passes is one pass with
        // λ = 0, which copies that column out.
        let (passes, lambda) = if passes == 0 {
            (1, 0.0)
        } else {
            (passes, lambda)
        };
        let mut current = grads.clone();
        let mut stride = SITE_PARAMS;
        let mut offset = LOG_TAU;
        for _ in 0..passes {
            let next = empty_f32(&sites, Shape::new([count_sites]));
            tau_diffusion_kernel::launch(
                &sites.client,
                count.clone(),
                dim,
                sites.clone().into_tensor_arg(),
                candidates.clone().into_tensor_arg(),
                grads.clone().into_tensor_arg(),
                SITE_PARAMS,
                LOG_TAU,
                current.into_tensor_arg(),
                stride,
                offset,
                next.clone().into_tensor_arg(),
                geometry.cand_w(),
                geometry.cand_h(),
                1.0 / geometry.downscale.max(1) as f32,
                count_sites,
                lambda,
            );
            current = next;
            (stride, offset) = (1, 0);
        }
        current
    }

    fn sad_adam_step(
        sites: CubeTensor,
        grads: CubeTensor,
        tau_grads: CubeTensor,
        state: CubeTensor,
        step: AdamStep,
    ) -> (CubeTensor, CubeTensor) {
        let sites = into_contiguous(sites);
        let grads = into_contiguous(grads);
        let tau_grads = into_contiguous(tau_grads);
        let state = into_contiguous(state);
        let sites_count = capacity(&sites);
        let out_sites = empty_f32(&sites, Shape::new([sites_count, SITE_PARAMS]));
        let out_state = empty_f32(&sites, Shape::new([sites_count, ADAM_STATE]));
        let (count, dim) = site_grid(sites_count);
        adam_kernel::launch(
            &sites.client,
            count,
            dim,
            sites.clone().into_tensor_arg(),
            grads.into_tensor_arg(),
            tau_grads.into_tensor_arg(),
            state.into_tensor_arg(),
            out_sites.clone().into_tensor_arg(),
            out_state.clone().into_tensor_arg(),
            AdamStepLaunch::new(
                step.lr_position,
                step.lr_log_tau,
                step.lr_radius,
                step.lr_color,
                step.lr_direction,
                step.lr_log_aniso,
                step.beta1,
                step.beta2,
                step.eps,
                step.correction1,
                step.correction2,
                step.grad_scale,
                step.max_x,
                step.max_y,
            ),
            sites_count,
        );
        (out_sites, out_state)
    }
}

/// The backward kernel, from ∂L/∂image or (`from_target`) from the target of a summed squared
/// error.
fn backward(
    sites: CubeTensor,
    candidates: CubeTensor,
    image: CubeTensor,
    geometry: RenderGeometry,
    from_target: bool,
) -> CubeTensor {
    let sites = into_contiguous(sites);
    let candidates = ids(candidates);
    let image = into_contiguous(image);
    let grads = zeros_f32(&sites, Shape::new([capacity(&sites), SITE_PARAMS]));
    let (count, dim) = image_grid(geometry);
    render_backward_kernel::launch(
        &sites.client,
        count,
        dim,
        sites.clone().into_tensor_arg(),
        candidates.into_tensor_arg(),
        image.into_tensor_arg(),
        grads.clone().into_tensor_arg(),
        geometry.width,
        geometry.height,
        geometry.cand_w(),
        geometry.cand_h(),
        capacity(&sites),
        geometry.inv_scale_sq(),
        from_target,
        native_shared_atomics(&sites),
        dtype_to_storage_type(sites.dtype),
    );
    grads
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
