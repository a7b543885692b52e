//! The 2D backward launch, with a map's upstream gradient spread to the image's shape.

use burn::backend::{TensorMetadata, ops::FloatTensorOps};
use burn::tensor::Shape;
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::ssim::{
    BackwardArgsLaunch, BackwardOutput, BackwardSourcesLaunch, GradTargets, ssim_backward_kernel,
};

use super::inputs::{InputPlanes, KernelMask, backward_types, grad_dtype};
use super::variant::backward_config;
use super::{Geometry, map_region};
use crate::runtime::launch::{empty_contiguous, expect_dims, launch_kernel};
use crate::ssim::backend::{KernelReduction, SsimKernelConfig, stacked_shape};

/// A map's flat upstream gradient as an image-shaped tensor, zero outside the map region, for
/// the backward kernels' `map_upstream` mode.
pub(super) fn map_upstream(
    upstream: CubeTensor,
    config: &SsimKernelConfig,
    shape: &Shape,
) -> CubeTensor {
    if config.crop() == 0 {
        return into_contiguous(CubeBackend::float_reshape(upstream, shape.clone()));
    }
    let region = map_region(config, shape);
    let cropped: Vec<usize> = region
        .iter()
        .map(|slice| (slice.end.unwrap() - slice.start) as usize)
        .collect();
    let upstream = CubeBackend::float_reshape(upstream, Shape::from(cropped));
    let zeros = CubeBackend::float_zeros(shape.clone(), &upstream.device, upstream.dtype.into());
    into_contiguous(CubeBackend::float_slice_assign(zeros, &region, upstream))
}

/// Runs the 2D backward kernel: the tracked inputs' gradients, stacked (see
/// [`SsimBackend::ssim_backward`]); under a window `mask`, of the masked forward.
pub(super) fn backward(
    img1: CubeTensor,
    img2: CubeTensor,
    mask: Option<CubeTensor>,
    partials: CubeTensor,
    upstream: CubeTensor,
    config: SsimKernelConfig,
    targets: GradTargets,
) -> CubeTensor {
    let (img1, img2, inputs) = InputPlanes::read(img1, img2);
    let partials = into_contiguous(partials);
    let kernel = backward_config(
        img1.client.properties(),
        &config,
        inputs.kernel_inputs(&img2, mask.is_some()),
        targets,
        BackwardOutput::Gradients,
    );
    let geometry = Geometry::of(&img1, kernel.layout, config.radius);
    // The kernel reads these at indices derived from img1's shape, unchecked.
    expect_dims(
        "fused_ssim backward",
        "img2",
        &img2,
        img1.shape().as_slice(),
    );
    let stacked = stacked_shape(targets.partial_count(), &img1.shape());
    expect_dims(
        "fused_ssim backward",
        "partials",
        &partials,
        stacked.as_slice(),
    );
    let upstream_len = config.value_shape(&img1.shape()).num_elements();
    assert!(
        upstream.shape().num_elements() == upstream_len,
        "fused_ssim backward: the upstream gradient has {} values, expected {upstream_len}",
        upstream.shape().num_elements()
    );
    let upstream = if config.is_map() {
        map_upstream(upstream, &config, &img1.shape())
    } else {
        into_contiguous(upstream)
    };
    let grads = empty_contiguous(
        &img1,
        stacked_shape(targets.grad_count(), &img1.shape()),
        grad_dtype(&img1, &img2, targets),
    );
    let mask = KernelMask::new(mask, &img1, "fused_ssim_masked backward");
    let (ssim_scale, l1_scale) = config.scales(&img1.shape());
    launch_kernel!(ssim_backward_kernel(
        &img1.client,
        geometry.count,
        geometry.dim,
        BackwardSourcesLaunch::new(
            img1.clone().into_tensor_arg(),
            img2.clone().into_tensor_arg(),
            mask.tensor.into_tensor_arg(),
            partials.clone().into_tensor_arg(),
            upstream.into_tensor_arg(),
            BackwardArgsLaunch::new(
                geometry.height,
                geometry.width,
                usize::from(config.reduction == KernelReduction::PerPlane),
                mask.planes_per_mask,
                ssim_scale,
                l1_scale,
            ),
            inputs.launch(),
        ),
        grads.clone().into_tensor_arg(),
        kernel,
        backward_types(&img1, &img2, &partials, grad_dtype(&img1, &img2, targets)),
    ));
    grads
}
