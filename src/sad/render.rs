//! The public render op.

use burn::tensor::{DType, Tensor};
use burn_sad_kernels::sad::{K, SITE_PARAMS};

use super::{Candidates, RenderGeometry, SadError, render_reference};
use crate::device::uses_fused_kernels;

/// Renders `[3, height, width]` RGB (not clamped) from `[capacity, 10]` sites and their
/// candidate lists, at the size the lists were built for (`candidates.geometry()`).
///
/// Differentiable with respect to `sites` (all 10 parameters): on CubeCL devices the backward is
/// a hand-written kernel that accumulates per tile before its global atomic adds; elsewhere
/// [`render_reference`] runs with Burn's autodiff.
///
/// # Panics
/// With the message of the [`SadError`] that [`try_render`] would return.
pub fn render(sites: Tensor<2>, candidates: &Candidates) -> Tensor<3> {
    try_render(sites, candidates).unwrap_or_else(|error| panic!("{error}"))
}

/// [`render`] that returns a typed error instead of panicking on bad input.
pub fn try_render(sites: Tensor<2>, candidates: &Candidates) -> Result<Tensor<3>, SadError> {
    let geometry = candidates.geometry();
    let (width, height) = (geometry.width, geometry.height);
    let dims = sites.dims();
    if dims[1] != SITE_PARAMS || sites.dtype() != DType::F32 {
        return Err(SadError::SitesShape(dims.to_vec()));
    }
    if dims[0] == 0 || dims[0] > i32::MAX as usize {
        return Err(SadError::BadCapacity(dims[0]));
    }
    if width == 0 || height == 0 || width > 65_535 || height > 65_535 {
        return Err(SadError::BadSize { width, height });
    }
    let ids = candidates.ids();
    if ids.dims() != [geometry.cells(), K] {
        return Err(SadError::CandidatesShape {
            expected: geometry.cells(),
            got: ids.dims().to_vec(),
        });
    }
    if sites.device() != ids.device() {
        return Err(SadError::DeviceMismatch {
            sites: format!("{:?}", sites.device()),
            candidates: format!("{:?}", ids.device()),
        });
    }
    if uses_fused_kernels(&sites.device()) {
        Ok(fused_render(sites, ids, geometry))
    } else {
        Ok(render_reference(sites, ids, geometry))
    }
}

#[cfg(feature = "cube")]
fn fused_render(
    sites: Tensor<2>,
    ids: Tensor<2, burn::tensor::Int>,
    geometry: RenderGeometry,
) -> Tensor<3> {
    use super::SadBackend;
    use burn::backend::Dispatch;
    Tensor::from_dispatch(<Dispatch as SadBackend>::sad_render(
        sites.into_dispatch(),
        ids.into_dispatch(),
        geometry,
    ))
}

#[cfg(not(feature = "cube"))]
fn fused_render(_: Tensor<2>, _: Tensor<2, burn::tensor::Int>, _: RenderGeometry) -> Tensor<3> {
    unreachable!("no CubeCL runtime is compiled in")
}
