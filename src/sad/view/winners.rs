//! The winner of each pixel (the live candidate of largest blend weight), found on the device
//! by the winner kernel where CubeCL kernels run, which the colour views paint by.

use burn::tensor::{Int, Tensor, TensorData};
use burn_sad_kernels::sad::K;

use crate::sad::{
    Candidates, RenderGeometry, RenderReadySites, SiteTable, blend_at, cell_of_pixel,
};

/// The site that wins each pixel of the render of `sites` with `candidates`: `[height, width]`,
/// −1 where no candidate is live. The winner kernel where CubeCL kernels run, else
/// [`winners_reference`].
pub fn winners(sites: &RenderReadySites, candidates: &Candidates) -> Tensor<2, Int> {
    let geometry = candidates.geometry();
    #[cfg(feature = "cube")]
    if let Some(records) = sites.records() {
        return fused_winners(records.clone(), candidates);
    }
    let tensor = sites.sites();
    let table = SiteTable::from_tensor(tensor.clone(), geometry.width, geometry.height);
    let ids = candidates
        .ids()
        .try_to_vec_as::<i32>()
        .expect("candidate ids are readable");
    let winners = winners_reference(&table.sites, &ids, geometry);
    Tensor::from_data(
        TensorData::new(winners, [geometry.height, geometry.width]),
        &tensor.device(),
    )
}

/// [`winners`] on the host: per pixel, the live slot of largest weight in [`blend_at`]'s
/// blend, the first where weights tie.
pub fn winners_reference(
    sites: &[[f32; burn_sad_kernels::sad::SITE_PARAMS]],
    ids: &[i32],
    geometry: RenderGeometry,
) -> Vec<i32> {
    let inv_scale_sq = geometry.inv_scale_sq();
    let mut winners = Vec::with_capacity(geometry.width * geometry.height);
    for y in 0..geometry.height {
        for x in 0..geometry.width {
            let cell = cell_of_pixel(x, y, geometry);
            let slots = blend_at(sites, &ids[cell * K..cell * K + K], x, y, inv_scale_sq);
            let mut best: Option<(usize, f32)> = None;
            for (site, weight) in slots {
                if best.is_none_or(|(_, top)| weight > top) {
                    best = Some((site, weight));
                }
            }
            winners.push(best.map_or(-1, |(site, _)| site as i32));
        }
    }
    winners
}

#[cfg(feature = "cube")]
fn fused_winners(records: Tensor<2, Int>, candidates: &Candidates) -> Tensor<2, Int> {
    use burn::backend::Dispatch;

    use crate::sad::SadViewKernels;
    use crate::sad::backend::KernelCall;
    let call = KernelCall::on(&records.device());
    call.out(<Dispatch as SadViewKernels>::sad_winners(
        KernelCall::arg(records),
        KernelCall::arg(candidates.ids()),
        candidates.geometry(),
    ))
}
