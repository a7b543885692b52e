//! The render-only pipeline's kernels as WGSL, compiled by CubeCL's WGSL compiler from the very
//! kernels `sad render` launches, with what a WebGPU host needs to bind them.

use std::sync::Arc;

use cubecl::prelude::TargetProperties;

use super::ViewerError;
use super::candidate_kernels::candidate_kernels;
use super::export::{Common, ExportedKernel, offline_properties};
use super::image_kernels::image_kernels;
use super::train_kernels::train_kernels;

/// Every kernel the viewer runs: the packing of the (viewed) records, the jump flood and the
/// propagation pass (`candidate_kernels`), the render, the winners, the three colour views, the
/// site marks and the canvas's RGBA pixels (`image_kernels`), and the trainer page's training
/// step (`train_kernels`).
pub fn viewer_kernels() -> Result<Vec<ExportedKernel>, ViewerError> {
    let common = Common {
        properties: offline_properties(),
        target: Arc::new(TargetProperties::default()),
    };
    let mut kernels = candidate_kernels(&common)?;
    kernels.extend(image_kernels(&common)?);
    kernels.extend(train_kernels(&common)?);
    Ok(kernels)
}
