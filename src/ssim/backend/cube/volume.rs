//! Launches of the 3D SSIM: the 2D kernels blur every slice in XY, the depth kernels blur along Z.

use burn::backend::{TensorMetadata, cubecl::dtype_to_storage_type};
use burn::tensor::{DType, Shape};
use burn_cubecl::{kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::ssim::{
    BackwardArgsLaunch, BackwardOutput, BackwardSourcesLaunch, COLUMNS, DepthArgsLaunch,
    DepthBackwardSourcesLaunch, ForwardArgsLaunch, ForwardOutput, ForwardSourcesLaunch,
    GradTargets, MOMENTS, ssim_backward_kernel, ssim_forward_kernel, ssim3d_depth_backward_kernel,
    ssim3d_depth_forward_kernel,
};
use cubecl::{CubeCount, CubeDim, ir::ElemType};

use super::Geometry;
use super::backward::map_upstream;
use super::forward::reduce_tile_sums;
use super::inputs::{InputPlanes, backward_types, encoding, forward_types, grad_dtype};
use super::variant::{
    DEPTH_LAYOUT, backward_config, depth_backward_config, depth_cube_dim, depth_forward_config,
    forward_config,
};
use crate::runtime::launch::{empty_contiguous, empty_f32, expect_dims, launch_kernel};
use crate::ssim::SsimConstants;
use crate::ssim::backend::{KernelReduction, SsimKernelConfig, stacked_shape};

/// Grid of the 3D depth stage: cubes of `DEPTH_LAYOUT` over every volume and depth chunk.
struct DepthGeometry {
    volumes: usize,
    depth: usize,
    height: usize,
    width: usize,
    chunks: usize,
    count: CubeCount,
    dim: CubeDim,
    cubes: usize,
}

impl DepthGeometry {
    fn of(tensor: &CubeTensor) -> Self {
        let shape = tensor.shape();
        let (volumes, depth, height, width) = (shape[0] * shape[1], shape[2], shape[3], shape[4]);
        let chunks = depth.div_ceil(DEPTH_LAYOUT.depth_chunk);
        let tiles_x = width.div_ceil(COLUMNS);
        let tiles_y = height.div_ceil(DEPTH_LAYOUT.rows);
        Self {
            volumes,
            depth,
            height,
            width,
            chunks,
            count: CubeCount::Static(tiles_x as u32, tiles_y as u32, (volumes * chunks) as u32),
            dim: depth_cube_dim(),
            cubes: tiles_x * tiles_y * volumes * chunks,
        }
    }

    /// The depth kernels' scalars over this grid: the forward's `crop`, the backward's
    /// `upstream_stride` (each 0 for the other), and the term's weight.
    fn args(
        &self,
        crop: usize,
        upstream_stride: usize,
        ssim_scale: f32,
        constants: &SsimConstants,
    ) -> DepthArgsLaunch {
        DepthArgsLaunch::new(
            self.depth,
            self.height,
            self.width,
            self.chunks,
            crop,
            upstream_stride,
            ssim_scale,
            constants.c1(),
            constants.c2(),
        )
    }
}

/// 3D forward: the 2D forward kernel blurs the [`MOMENTS`] statistics of every slice in XY, then the
/// depth kernel blurs them along Z and evaluates SSIM.
pub(super) fn forward_volume(
    img1: CubeTensor,
    img2: CubeTensor,
    config: SsimKernelConfig,
    targets: Option<GradTargets>,
) -> (CubeTensor, CubeTensor) {
    assert!(!config.has_l1(), "the 3D kernels have no L1 term");
    // The depth kernels read the volumes contiguous.
    let (img1, img2, inputs) = InputPlanes::read(into_contiguous(img1), into_contiguous(img2));
    let shape = img1.shape();
    // The slice kernel reads both volumes at the same indices, unchecked.
    expect_dims("fused_ssim3d", "img2", &img2, shape.as_slice());
    let kernel = forward_config(
        img1.client.properties(),
        &config,
        inputs.kernel_inputs(&img2, false),
        None,
        ForwardOutput::Moments,
    );
    let slices = Geometry::of(&img1, kernel.layout, config.radius);
    let moments = empty_f32(&img1, stacked_shape(MOMENTS, &shape));
    let unused = empty_f32(&img1, Shape::new([1]));
    launch_kernel!(ssim_forward_kernel(
        &img1.client,
        slices.count,
        slices.dim,
        ForwardSourcesLaunch::new(
            img1.clone().into_tensor_arg(),
            img2.clone().into_tensor_arg(),
            unused.clone().into_tensor_arg(),
            ForwardArgsLaunch::new(
                slices.height,
                slices.width,
                0,
                1,
                0.0,
                0.0,
                config.constants.c1(),
                config.constants.c2(),
            ),
            inputs.launch(),
        ),
        unused.clone().into_tensor_arg(),
        moments.clone().into_tensor_arg(),
        kernel,
        forward_types(&img1, &img2, &moments),
    ));

    let volume = DepthGeometry::of(&img1);
    // The map takes the tile sums' place, at the volumes' size.
    let tile_sums = if config.is_map() {
        empty_f32(&img1, shape.clone())
    } else {
        empty_f32(&img1, Shape::new([volume.cubes]))
    };
    let partials = match targets {
        Some(targets) => empty_contiguous(
            &img1,
            stacked_shape(targets.partial_count(), &shape),
            config.partials_dtype(),
        ),
        None => unused,
    };
    let (ssim_scale, _) = config.scales(&shape);
    let args = volume.args(config.crop(), 0, ssim_scale, &config.constants);
    ssim3d_depth_forward_kernel::launch(
        &img1.client,
        volume.count,
        volume.dim,
        moments.into_tensor_arg(),
        tile_sums.clone().into_tensor_arg(),
        partials.clone().into_tensor_arg(),
        args,
        depth_forward_config(&config, targets),
        [DType::F32, partials.dtype].map(dtype_to_storage_type),
    );
    (
        reduce_tile_sums(tile_sums, config, volume.volumes),
        partials,
    )
}

/// 3D backward: the 2D backward kernel blurs the partial maps of every slice in XY, then the
/// depth kernel blurs them along Z and forms the gradients.
pub(super) fn backward_volume(
    img1: CubeTensor,
    img2: CubeTensor,
    partials: CubeTensor,
    upstream: CubeTensor,
    config: SsimKernelConfig,
    targets: GradTargets,
) -> CubeTensor {
    // The depth kernels read the volumes contiguous.
    let (img1, img2, inputs) = InputPlanes::read(into_contiguous(img1), into_contiguous(img2));
    let partials = into_contiguous(partials);
    let shape = img1.shape();
    let upstream = if config.is_map() {
        map_upstream(upstream, &config, &shape)
    } else {
        into_contiguous(upstream)
    };
    let maps = targets.partial_count();
    // The slice kernel reads the partial maps at indices of img1's shape, unchecked.
    let stacked = stacked_shape(maps, &shape);
    expect_dims(
        "fused_ssim3d backward",
        "partials",
        &partials,
        stacked.as_slice(),
    );
    let kernel = backward_config(
        img1.client.properties(),
        &config,
        inputs.kernel_inputs(&img2, false),
        targets,
        BackwardOutput::BlurredPartials,
    );
    let slices = Geometry::of(&img1, kernel.layout, config.radius);
    let blurred = empty_f32(&img1, stacked_shape(maps, &shape));
    let unused = empty_f32(&img1, Shape::new([1]));
    launch_kernel!(ssim_backward_kernel(
        &img1.client,
        slices.count,
        slices.dim,
        BackwardSourcesLaunch::new(
            img1.clone().into_tensor_arg(),
            img2.clone().into_tensor_arg(),
            unused.into_tensor_arg(),
            partials.clone().into_tensor_arg(),
            upstream.clone().into_tensor_arg(),
            BackwardArgsLaunch::new(slices.height, slices.width, 0, 1, 0.0, 0.0),
            inputs.launch(),
        ),
        blurred.clone().into_tensor_arg(),
        kernel,
        backward_types(&img1, &img2, &partials, DType::F32),
    ));

    let volume = DepthGeometry::of(&img1);
    let grads = empty_contiguous(
        &img1,
        stacked_shape(targets.grad_count(), &shape),
        grad_dtype(&img1, &img2, targets),
    );
    let (ssim_scale, _) = config.scales(&shape);
    let per_volume = config.reduction == KernelReduction::PerPlane;
    let args = volume.args(0, usize::from(per_volume), ssim_scale, &config.constants);
    ssim3d_depth_backward_kernel::launch(
        &img1.client,
        volume.count,
        volume.dim,
        DepthBackwardSourcesLaunch::new(
            img1.clone().into_tensor_arg(),
            img2.clone().into_tensor_arg(),
            blurred.into_tensor_arg(),
            upstream.into_tensor_arg(),
            args,
        ),
        grads.clone().into_tensor_arg(),
        depth_backward_config(&config, targets, encoding(&img2)),
        depth_backward_types(&img1, &img2, grad_dtype(&img1, &img2, targets)),
    );
    grads
}

/// The depth backward's element types: f32 arithmetic, the two volumes' storage types, then the
/// gradients'.
fn depth_backward_types(img1: &CubeTensor, img2: &CubeTensor, grads: DType) -> [ElemType; 4] {
    [DType::F32, img1.dtype, img2.dtype, grads].map(dtype_to_storage_type)
}
