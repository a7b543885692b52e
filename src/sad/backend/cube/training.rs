//! The training-step kernels (`SadTrainingKernels`): per-site statistics launched here; tau
//! diffusion in `diffusion.rs`, Adam in `adam.rs`, the prune in `prune.rs`.

use burn::backend::cubecl::dtype_to_storage_type;
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::sad::{AdamStep, BackwardOutputs, StatisticsKind, site_statistics_kernel};

use super::super::SadTrainingKernels;
use super::candidates::{record_vector_size, site_records_and_zeros};
use super::diffusion::diffuse;
use super::render::backward;
use super::{expect_sites_and_lists, ids, image_grid, pixel_grid, table_sums};
use crate::runtime::launch::{expect_dims, launch_kernel};
use crate::sad::{BackwardStrategy, RenderGeometry};

impl SadTrainingKernels for CubeBackend {
    fn sad_squared_error_gradients(
        sites: CubeTensor,
        candidates: CubeTensor,
        target: CubeTensor,
        geometry: RenderGeometry,
        removal: bool,
        strategy: BackwardStrategy,
    ) -> CubeTensor {
        let outputs = BackwardOutputs {
            from_target: true,
            removal,
        };
        backward(sites, candidates, target, geometry, outputs, strategy)
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
        let op = "sad_site_statistics";
        expect_sites_and_lists(op, &sites, &candidates, geometry);
        expect_dims(
            op,
            "the target",
            &target,
            &[3, geometry.height, geometry.width],
        );
        let (records, stats) = site_records_and_zeros(&sites, kind.channels());
        let (count, dim) = image_grid(geometry);
        launch_kernel!(site_statistics_kernel(
            &sites.client,
            count,
            dim,
            record_vector_size(),
            records.into_tensor_arg(),
            candidates.into_tensor_arg(),
            target.into_tensor_arg(),
            stats.clone().into_tensor_arg(),
            pixel_grid(geometry, &sites),
            kind,
            table_sums(&sites, false),
            dtype_to_storage_type(sites.dtype),
        ));
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
        // Zero passes is one pass with λ = 0, which copies the log τ column out.
        let (passes, lambda) = if passes == 0 {
            (1, 0.0)
        } else {
            (passes, lambda)
        };
        diffuse(
            sites,
            candidates,
            grads,
            None,
            geometry,
            (lambda, passes),
            None,
        )
        .0
    }

    fn sad_prune(sites: CubeTensor, removal: CubeTensor, count: usize, norm: f32) -> CubeTensor {
        super::prune::prune(sites, removal, count, norm)
    }

    fn sad_diffuse_and_step(
        sites: CubeTensor,
        candidates: CubeTensor,
        grads: CubeTensor,
        state: CubeTensor,
        kept: CubeTensor,
        use_kept: bool,
        step: AdamStep,
        geometry: RenderGeometry,
        lambda: f32,
        passes: u32,
    ) -> (CubeTensor, CubeTensor, CubeTensor) {
        super::adam::diffuse_and_step(
            sites,
            candidates,
            grads,
            state,
            use_kept.then_some(kept),
            step,
            (geometry, lambda, passes),
        )
    }

    fn sad_adam_step(
        sites: CubeTensor,
        grads: CubeTensor,
        tau_grads: CubeTensor,
        state: CubeTensor,
        step: AdamStep,
    ) -> (CubeTensor, CubeTensor) {
        super::adam::adam_with_tau(sites, grads, tau_grads, (1, 0), state, step)
    }
}
