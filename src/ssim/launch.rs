//! Launches of the SSIM kernels on the CubeCL backend (every runtime).

use burn::backend::{TensorMetadata, cubecl::dtype_to_storage_type, ops::FloatTensorOps};
use burn::tensor::Shape;
use burn_cubecl::{
    CubeBackend, kernel::into_contiguous, ops::numeric::empty_device_contiguous_dtype,
    tensor::CubeTensor,
};
use burn_sad_kernels::ssim::{GradTargets, TILE, ssim_backward_kernel, ssim_forward_kernel};
use cubecl::{CubeCount, CubeDim};

use super::{SsimBackend, SsimKernelConfig};

const C1: f32 = 1e-4;
const C2: f32 = 9e-4;

/// Grid of one cube per output tile per plane, and the plane geometry.
struct Geometry {
    planes: usize,
    height: usize,
    width: usize,
    count: CubeCount,
    cubes: usize,
}

impl Geometry {
    fn of(tensor: &CubeTensor) -> Self {
        let shape = tensor.shape();
        let (height, width) = (shape[2], shape[3]);
        let planes = shape[0] * shape[1];
        let (tiles_x, tiles_y) = (width.div_ceil(TILE), height.div_ceil(TILE));
        Self {
            planes,
            height,
            width,
            count: CubeCount::Static(tiles_x as u32, tiles_y as u32, planes as u32),
            cubes: tiles_x * tiles_y * planes,
        }
    }
}

fn empty_like(tensor: &CubeTensor, shape: Shape) -> CubeTensor {
    empty_device_contiguous_dtype(
        tensor.client.clone(),
        tensor.device.clone(),
        shape,
        tensor.dtype,
    )
}

/// Runs the forward kernel; returns the mean SSIM and, when `targets` is given, the partials.
fn forward(
    img1: CubeTensor,
    img2: CubeTensor,
    config: SsimKernelConfig,
    targets: Option<GradTargets>,
) -> (CubeTensor, CubeTensor) {
    let img1 = into_contiguous(img1);
    let img2 = into_contiguous(img2);
    let geometry = Geometry::of(&img1);
    let tile_sums = empty_like(&img1, Shape::new([geometry.cubes]));
    let partials = match targets {
        Some(targets) => {
            let mut dims = vec![targets.partial_count()];
            dims.extend(img1.shape().iter().copied());
            empty_like(&img1, Shape::from(dims))
        }
        None => empty_like(&img1, Shape::new([1])),
    };
    ssim_forward_kernel::launch(
        &img1.client,
        geometry.count.clone(),
        CubeDim::new_2d(TILE as u32, TILE as u32),
        img1.clone().into_tensor_arg(),
        img2.clone().into_tensor_arg(),
        tile_sums.clone().into_tensor_arg(),
        partials.clone().into_tensor_arg(),
        geometry.height,
        geometry.width,
        config.crop(),
        C1,
        C2,
        config.radius,
        config.sigma_bits,
        targets,
        dtype_to_storage_type(img1.dtype),
    );
    let count = config.map_len(geometry.planes, geometry.height, geometry.width);
    let mean = CubeBackend::float_mul_scalar(
        CubeBackend::float_sum(tile_sums),
        (1.0 / count as f64).into(),
    );
    (mean, partials)
}

impl SsimBackend for CubeBackend {
    fn ssim_mean(img1: CubeTensor, img2: CubeTensor, config: SsimKernelConfig) -> CubeTensor {
        forward(img1, img2, config, None).0
    }

    fn ssim_mean_with_partials(
        img1: CubeTensor,
        img2: CubeTensor,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> (CubeTensor, CubeTensor) {
        forward(img1, img2, config, Some(targets))
    }

    fn ssim_backward(
        img1: CubeTensor,
        img2: CubeTensor,
        partials: CubeTensor,
        upstream: CubeTensor,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> CubeTensor {
        let img1 = into_contiguous(img1);
        let img2 = into_contiguous(img2);
        let partials = into_contiguous(partials);
        let upstream = into_contiguous(upstream);
        let geometry = Geometry::of(&img1);
        let mut dims = vec![targets.grad_count()];
        dims.extend(img1.shape().iter().copied());
        let grads = empty_like(&img1, Shape::from(dims));
        let count = config.map_len(geometry.planes, geometry.height, geometry.width);
        ssim_backward_kernel::launch(
            &img1.client,
            geometry.count,
            CubeDim::new_2d(TILE as u32, TILE as u32),
            img1.clone().into_tensor_arg(),
            img2.clone().into_tensor_arg(),
            partials.into_tensor_arg(),
            upstream.into_tensor_arg(),
            grads.clone().into_tensor_arg(),
            geometry.height,
            geometry.width,
            1.0 / count as f32,
            config.radius,
            config.sigma_bits,
            targets,
            dtype_to_storage_type(img1.dtype),
        );
        grads
    }
}
