//! The public render op.

#[cfg(feature = "cube")]
use burn::backend::Dispatch;
use burn::tensor::{DType, Int, Tensor};
use burn_sad_kernels::sad::{K, SITE_PARAMS};

#[cfg(feature = "cube")]
use super::RenderGeometry;
#[cfg(feature = "cube")]
use super::backend::KernelCall;
use super::{BackwardStrategy, Candidates, SadError, ViewTransform, render_reference};
#[cfg(feature = "cube")]
use super::{SadBackend, SadCandidateKernels, SadViewKernels, SiteRecordKind};
#[cfg(feature = "cube")]
use crate::device::{KernelFamily, uses_fused_kernels};

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
    render_with(sites, candidates, BackwardStrategy::Auto)
}

/// [`render`] that returns a typed error instead of panicking on bad input.
pub fn try_render(sites: Tensor<2>, candidates: &Candidates) -> Result<Tensor<3>, SadError> {
    try_render_with(sites, candidates, BackwardStrategy::Auto)
}

/// [`render`] whose backward kernel sums its gradients as `strategy` says (every strategy gives
/// the same gradients; they differ in speed). Ignored where the reference render runs.
///
/// # Panics
/// With the message of the [`SadError`] that [`try_render_with`] would return.
pub fn render_with(
    sites: Tensor<2>,
    candidates: &Candidates,
    strategy: BackwardStrategy,
) -> Tensor<3> {
    try_render_with(sites, candidates, strategy).unwrap_or_else(|error| panic!("{error}"))
}

/// [`render_with`] that returns a typed error instead of panicking on bad input, or on a
/// `strategy` the device cannot run ([`SadError::UnsupportedStrategy`]).
pub fn try_render_with(
    sites: Tensor<2>,
    candidates: &Candidates,
    strategy: BackwardStrategy,
) -> Result<Tensor<3>, SadError> {
    check_render_inputs(&sites, candidates)?;
    #[cfg(feature = "cube")]
    if uses_fused_kernels(&sites.device()) {
        // A tracked table's backward runs the training kernels.
        let families: &[KernelFamily] = if sites.is_require_grad() {
            &[KernelFamily::SadRender, KernelFamily::SadTraining]
        } else {
            &[KernelFamily::SadRender]
        };
        crate::device::families_support(&sites.device(), families)
            .map_err(|problem| SadError::UnsupportedDevice(problem.to_string()))?;
        if !strategy.supported(&sites.device()) {
            return Err(SadError::UnsupportedStrategy(strategy));
        }
        return Ok(fused_render(
            sites,
            candidates.ids(),
            candidates.geometry(),
            strategy,
        ));
    }
    let _ = strategy;
    Ok(render_reference(
        sites,
        candidates.ids(),
        candidates.geometry(),
    ))
}

/// Sites made ready for many renders: on CubeCL devices their full site records (exact values
/// and colour in 16-byte words, which the render kernel reads) are packed once here instead of
/// at every [`render`]. Not differentiable.
#[derive(Clone, Debug)]
pub struct RenderReadySites {
    sites: Tensor<2>,
    #[cfg_attr(not(feature = "cube"), allow(dead_code))]
    records: Option<Tensor<2, Int>>,
    view: ViewTransform,
}

impl RenderReadySites {
    /// Packs `[capacity, 10]` sites (one launch on CubeCL devices, nothing elsewhere).
    pub fn new(sites: Tensor<2>) -> Self {
        #[cfg(feature = "cube")]
        let records = uses_fused_kernels(&sites.device())
            .then(|| fused_records(sites.clone(), ViewTransform::IDENTITY));
        #[cfg(not(feature = "cube"))]
        let records = None;
        Self {
            sites,
            records,
            view: ViewTransform::IDENTITY,
        }
    }

    /// Packs `[capacity, 10]` sites as `view` places them (see [`ViewTransform`]): the renders,
    /// candidate builds, winners and site marks of the result are of the view, while
    /// [`sites`](Self::sites) stay the given ones. An error where no CubeCL kernel runs (the
    /// Flex fallback renders from the sites themselves), unless `view` is the identity.
    pub fn viewed(sites: Tensor<2>, view: ViewTransform) -> Result<Self, SadError> {
        if view.is_identity() {
            return Ok(Self::new(sites));
        }
        #[cfg(feature = "cube")]
        if uses_fused_kernels(&sites.device()) {
            let records = Some(fused_records(sites.clone(), view));
            return Ok(Self {
                sites,
                records,
                view,
            });
        }
        Err(SadError::ViewNeedsKernels)
    }

    /// The sites, `[capacity, 10]`.
    pub fn sites(&self) -> &Tensor<2> {
        &self.sites
    }

    /// Where the records place the sites.
    pub fn view(&self) -> ViewTransform {
        self.view
    }

    /// The full site records (`[capacity, RECORD_WORDS]` u32) where CubeCL kernels run.
    #[cfg(feature = "cube")]
    pub(crate) fn records(&self) -> Option<&Tensor<2, Int>> {
        self.records.as_ref()
    }
}

/// [`render`] of sites packed by [`RenderReadySites::new`]: the same image, one launch.
///
/// # Panics
/// With the message of the [`SadError`] that [`try_render`] would return.
pub fn render_ready(sites: &RenderReadySites, candidates: &Candidates) -> Tensor<3> {
    check_render_inputs(&sites.sites, candidates).unwrap_or_else(|error| panic!("{error}"));
    #[cfg(feature = "cube")]
    if let Some(records) = &sites.records {
        return fused_render_records(records.clone(), candidates);
    }
    render_reference(sites.sites.clone(), candidates.ids(), candidates.geometry())
}

/// The checks of [`try_render`]: the sites' shape and type, the size, the lists, the devices.
fn check_render_inputs(sites: &Tensor<2>, candidates: &Candidates) -> Result<(), SadError> {
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
    Ok(())
}

#[cfg(feature = "cube")]
fn fused_render(
    sites: Tensor<2>,
    ids: Tensor<2, Int>,
    geometry: RenderGeometry,
    strategy: BackwardStrategy,
) -> Tensor<3> {
    Tensor::from_dispatch(<Dispatch as SadBackend>::sad_render(
        sites.into_dispatch(),
        ids.into_dispatch(),
        geometry,
        strategy,
    ))
}

#[cfg(feature = "cube")]
fn fused_records(sites: Tensor<2>, view: ViewTransform) -> Tensor<2, Int> {
    let call = KernelCall::on(&sites.device());
    call.out(<Dispatch as SadCandidateKernels>::sad_pack_sites(
        KernelCall::arg(sites),
        SiteRecordKind::Full,
        view,
    ))
}

#[cfg(feature = "cube")]
fn fused_render_records(records: Tensor<2, Int>, candidates: &Candidates) -> Tensor<3> {
    let call = KernelCall::on(&records.device());
    call.out(<Dispatch as SadViewKernels>::sad_render_records(
        KernelCall::arg(records),
        KernelCall::arg(candidates.ids()),
        candidates.geometry(),
    ))
}
