//! The training ops as tensor functions: the CubeCL kernels where they run, the host
//! references elsewhere.

use burn::tensor::{Bool, Tensor, TensorData};
use burn_sad_kernels::sad::{POSITION, SITE_PARAMS, StatisticsKind};

use super::TargetImage;
use super::densify::prune_candidates;
use super::reference::site_statistics_reference;
#[cfg(feature = "cube")]
use crate::device::uses_fused_kernels;
use crate::sad::{BackwardStrategy, Candidates, SiteTable};

pub(super) fn rows<const N: usize>(values: &[f32]) -> Vec<[f32; N]> {
    values
        .chunks_exact(N)
        .map(|row| row.try_into().expect("rows of N"))
        .collect()
}

pub(super) fn host_ids(candidates: &Candidates) -> Vec<i32> {
    candidates
        .ids()
        .try_to_vec_as::<i32>()
        .expect("candidate ids are readable")
}

/// ∂L/∂sites (`[capacity, 10]`) of the summed squared error L = Σ (render − target)² against
/// `target` (`[3, H, W]`; over the pixels it counts, see [`TargetImage::to_tensor`]), the
/// reference trainer's loss, and with `removal` each site's removal
/// delta (`[capacity]`, see [`StatisticsKind::RemovalDelta`]). On CubeCL devices one kernel
/// recomputes the render per pixel and forms ∂L/∂ĉ = 2(ĉ − t) itself, as the reference's
/// gradient kernel does, and adds the removal delta in the same pass; elsewhere Burn's autodiff
/// differentiates [`render_reference`](crate::sad::render_reference) and the host reference
/// computes the delta.
pub fn squared_error_gradients(
    sites: &Tensor<2>,
    candidates: &Candidates,
    target: &Tensor<3>,
    removal: bool,
    strategy: BackwardStrategy,
) -> (Tensor<2>, Option<Tensor<1>>) {
    #[cfg(feature = "cube")]
    if uses_fused_kernels(&sites.device()) {
        let grads = dispatch::squared_error_gradients(
            sites.clone(),
            candidates,
            target.clone(),
            removal,
            strategy,
        );
        if !removal {
            return (grads, None);
        }
        let capacity = grads.dims()[0];
        let delta = grads.clone().narrow(1, SITE_PARAMS, 1).reshape([capacity]);
        return (grads.narrow(1, 0, SITE_PARAMS), Some(delta));
    }
    let _ = strategy;
    let tracked = sites.clone().autodiff().require_grad();
    let image =
        crate::sad::render_reference(tracked.clone(), candidates.ids(), candidates.geometry());
    let error = (image - target.clone()) * counted(target);
    let grads = (error.clone() * error).sum().backward();
    let grads = tracked.grad(&grads).expect("the sites are tracked").inner();
    let delta = removal.then(|| removal_deltas(sites, candidates, target));
    (grads, delta)
}

/// `[1, H, W]`: 1 where `target` (`[3, H, W]`) counts a pixel, 0 where its red value marks it
/// outside the fit's mask (see [`TargetImage::to_tensor`]).
fn counted(target: &Tensor<3>) -> Tensor<3> {
    target
        .clone()
        .narrow(0, 0, 1)
        .greater_equal_elem(0.0)
        .float()
}

/// PSNR of `image` against `target` (both `[3, H, W]`, peak 1) over the pixels `target` counts
/// (see [`TargetImage::to_tensor`]): the squared error summed over them, divided by 3 per pixel,
/// as the reference computes it with a mask.
pub fn masked_psnr(image: Tensor<3>, target: Tensor<3>) -> f64 {
    let keep = counted(&target);
    let pixels = keep.clone().sum().into_scalar::<f32>() as f64;
    let error = (image - target) * keep;
    let sum = (error.clone() * error).sum().into_scalar::<f32>() as f64;
    let mse = sum / (pixels.max(1.0) * 3.0);
    if mse == 0.0 {
        100.0
    } else {
        -10.0 * mse.log10()
    }
}

/// Each site's removal delta against `target` (`[capacity]`), by the statistics pass (see
/// [`StatisticsKind::RemovalDelta`]).
pub fn removal_deltas(sites: &Tensor<2>, candidates: &Candidates, target: &Tensor<3>) -> Tensor<1> {
    let stats = site_statistics(sites, candidates, target, StatisticsKind::RemovalDelta);
    let capacity = stats.dims()[0];
    stats.reshape([capacity])
}

/// `sites` with the `count` live sites whose removal costs least marked inactive (position
/// (−1, −1)): smallest `removal · norm` first (negative as 0, non-finite never), ties by id, as
/// the reference's stable sort ranks them. On CubeCL devices a radix select runs on the device
/// with no read back to the host; elsewhere [`prune_candidates`] selects on the host.
pub fn prune_sites(sites: Tensor<2>, removal: Tensor<1>, count: usize, norm: f32) -> Tensor<2> {
    if count == 0 {
        return sites;
    }
    #[cfg(feature = "cube")]
    if uses_fused_kernels(&sites.device()) {
        return dispatch::prune(sites, removal, count, norm);
    }
    let capacity = sites.dims()[0];
    let delta = removal
        .try_to_vec_as::<f32>()
        .expect("removal deltas are readable");
    let positions_x = sites
        .clone()
        .narrow(1, POSITION, 1)
        .try_to_vec_as::<f32>()
        .expect("positions are readable");
    let mut doomed = vec![false; capacity];
    for id in prune_candidates(&positions_x, &delta, norm, count) {
        doomed[id] = true;
    }
    let device = sites.device();
    let mask = Tensor::<2, Bool>::from_data(TensorData::new(doomed, [capacity, 1]), &device);
    let positions = sites
        .clone()
        .narrow(1, POSITION, 2)
        .mask_fill(mask.expand([capacity, 2]), -1.0);
    let rest = sites.narrow(1, POSITION + 2, SITE_PARAMS - 2);
    Tensor::cat(vec![positions, rest], 1)
}

/// Per-site statistics of the render of `sites` against `target` (`[3, H, W]`):
/// `[capacity, kind.channels()]`, summed over pixels (see [`StatisticsKind`]).
pub fn site_statistics(
    sites: &Tensor<2>,
    candidates: &Candidates,
    target: &Tensor<3>,
    kind: StatisticsKind,
) -> Tensor<2> {
    let geometry = candidates.geometry();
    #[cfg(feature = "cube")]
    if uses_fused_kernels(&sites.device()) {
        return dispatch::site_statistics(sites.clone(), candidates, target.clone(), kind);
    }
    let table = SiteTable::from_tensor(sites.clone(), geometry.width, geometry.height);
    let image = TargetImage::from_tensor(target.clone());
    let stats =
        site_statistics_reference(&table.sites, &host_ids(candidates), &image, geometry, kind);
    Tensor::from_data(
        TensorData::new(stats, [table.sites.len(), kind.channels()]),
        &sites.device(),
    )
}

#[cfg(feature = "cube")]
mod dispatch {
    use burn::backend::Dispatch;
    use burn::tensor::Tensor;
    use burn_sad_kernels::sad::StatisticsKind;

    use crate::sad::backend::KernelCall;
    use crate::sad::{BackwardStrategy, Candidates, SadTrainingKernels};

    pub fn squared_error_gradients(
        sites: Tensor<2>,
        candidates: &Candidates,
        target: Tensor<3>,
        removal: bool,
        strategy: BackwardStrategy,
    ) -> Tensor<2> {
        let call = KernelCall::on(&sites.device());
        call.out(
            <Dispatch as SadTrainingKernels>::sad_squared_error_gradients(
                KernelCall::arg(sites),
                KernelCall::arg(candidates.ids()),
                KernelCall::arg(target),
                candidates.geometry(),
                removal,
                strategy,
            ),
        )
    }

    pub fn prune(sites: Tensor<2>, removal: Tensor<1>, count: usize, norm: f32) -> Tensor<2> {
        let call = KernelCall::on(&sites.device());
        call.out(<Dispatch as SadTrainingKernels>::sad_prune(
            KernelCall::arg(sites),
            KernelCall::arg(removal),
            count,
            norm,
        ))
    }

    pub fn site_statistics(
        sites: Tensor<2>,
        candidates: &Candidates,
        target: Tensor<3>,
        kind: StatisticsKind,
    ) -> Tensor<2> {
        let call = KernelCall::on(&sites.device());
        call.out(<Dispatch as SadTrainingKernels>::sad_site_statistics(
            KernelCall::arg(sites),
            KernelCall::arg(candidates.ids()),
            KernelCall::arg(target),
            candidates.geometry(),
            kind,
        ))
    }
}
