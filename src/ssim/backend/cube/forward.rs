//! The 2D forward launch, and the reduction of its tile sums into the op's value.

use burn::backend::{TensorMetadata, ops::FloatTensorOps};
use burn::tensor::Shape;
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::ssim::{
    ForwardArgsLaunch, ForwardOutput, ForwardSourcesLaunch, GradTargets, ssim_forward_kernel,
};

use super::inputs::{InputPlanes, KernelMask, forward_types};
use super::variant::forward_config;
use super::{Geometry, map_region};
use crate::runtime::launch::{empty_contiguous, empty_f32, expect_dims, launch_kernel};
use crate::ssim::backend::{KernelReduction, SsimKernelConfig, stacked_shape};

/// Runs the forward kernel; returns the mean SSIM and, when `targets` is given, the partials.
/// With a window `mask`, the statistics are normalised convolutions over its weights.
pub(super) fn forward(
    img1: CubeTensor,
    img2: CubeTensor,
    mask: Option<CubeTensor>,
    config: SsimKernelConfig,
    targets: Option<GradTargets>,
) -> (CubeTensor, CubeTensor) {
    let (img1, img2, inputs) = InputPlanes::read(img1, img2);
    // The kernel reads both images at the same pixels, unchecked.
    expect_dims("fused_ssim", "img2", &img2, img1.shape().as_slice());
    let window_mask = mask.is_some();
    let mask = KernelMask::new(mask, &img1, "fused_ssim_masked");
    let output = if config.is_map() {
        ForwardOutput::Map
    } else {
        ForwardOutput::TileSums
    };
    let kernel = forward_config(
        img1.client.properties(),
        &config,
        inputs.kernel_inputs(&img2, window_mask),
        targets,
        output,
    );
    let layout = kernel.layout;
    let geometry = Geometry::of(&img1, layout, config.radius);
    // The map takes the tile sums' place, at the image's size.
    let tile_sums = if config.is_map() {
        empty_f32(&img1, img1.shape())
    } else {
        empty_f32(&img1, Shape::new([geometry.cubes]))
    };
    let (ssim_scale, l1_scale) = config.scales(&img1.shape());
    let partials = match targets {
        Some(targets) => empty_contiguous(
            &img1,
            stacked_shape(targets.partial_count(), &img1.shape()),
            config.partials_dtype(),
        ),
        None => empty_f32(&img1, Shape::new([1])),
    };
    launch_kernel!(ssim_forward_kernel(
        &img1.client,
        geometry.count.clone(),
        geometry.dim,
        ForwardSourcesLaunch::new(
            img1.clone().into_tensor_arg(),
            img2.clone().into_tensor_arg(),
            mask.tensor.into_tensor_arg(),
            ForwardArgsLaunch::new(
                geometry.height,
                geometry.width,
                config.crop(),
                mask.planes_per_mask,
                ssim_scale,
                l1_scale,
                config.constants.c1(),
                config.constants.c2(),
            ),
            inputs.launch(),
        ),
        tile_sums.clone().into_tensor_arg(),
        partials.clone().into_tensor_arg(),
        kernel,
        forward_types(&img1, &img2, &partials),
    ));
    let value = reduce_tile_sums(tile_sums, config, geometry.planes);
    (value, partials)
}

/// Sums the cubes' tile sums into the value: one total, or one per plane (per volume in 3D)
/// when the grid holds `planes` equal runs of cubes. A map (`tile_sums` of the images' shape) is
/// cropped to the map region and flattened.
pub(super) fn reduce_tile_sums(
    tile_sums: CubeTensor,
    config: SsimKernelConfig,
    planes: usize,
) -> CubeTensor {
    match config.reduction {
        KernelReduction::Total => CubeBackend::float_sum(tile_sums),
        KernelReduction::PerPlane => {
            let cubes = tile_sums.shape().num_elements();
            let per_plane = Shape::new([planes, cubes / planes]);
            let sums =
                CubeBackend::float_sum_dim(CubeBackend::float_reshape(tile_sums, per_plane), 1);
            CubeBackend::float_reshape(sums, Shape::new([planes]))
        }
        KernelReduction::Map => {
            let shape = tile_sums.shape();
            let map = if config.crop() == 0 {
                tile_sums
            } else {
                into_contiguous(CubeBackend::float_slice(
                    tile_sums,
                    &map_region(&config, &shape),
                ))
            };
            CubeBackend::float_reshape(map, config.value_shape(&shape))
        }
    }
}
