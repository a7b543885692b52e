//! The SSIM kernels on the CubeCL backend (every runtime): `SsimBackend`'s impl here, the
//! inputs and masks as the kernels read them in `inputs`, the 2D launches in `forward` and
//! `backward`, the 3D ones in `volume`, the variants chosen from the device in `variant`.

use burn::backend::TensorMetadata;
use burn::tensor::{Shape, Slice};
use burn_cubecl::{CubeBackend, tensor::CubeTensor};
use burn_sad_kernels::ssim::{GradTargets, StripLayout, tile_columns};
use cubecl::{CubeCount, CubeDim};

mod backward;
mod forward;
mod inputs;
pub(crate) mod variant;
mod volume;

use backward::backward;
use forward::forward;
use inputs::UNORM8_TARGETS;
use variant::walk_cube_dim;
use volume::{backward_volume, forward_volume};

use crate::ssim::backend::{SsimBackend, SsimKernelConfig};

/// Grid of one cube per output tile per plane, and the plane geometry. The planes are every
/// `[height, width]` slice of the tensor: `batch · channels` in 2D, `· depth` in 3D.
struct Geometry {
    planes: usize,
    height: usize,
    width: usize,
    count: CubeCount,
    dim: CubeDim,
    cubes: usize,
}

impl Geometry {
    fn of(tensor: &CubeTensor, layout: StripLayout, radius: usize) -> Self {
        let shape = tensor.shape();
        let rank = shape.num_dims();
        let (height, width) = (shape[rank - 2], shape[rank - 1]);
        let planes = shape.num_elements() / (height * width);
        let tiles_x = width.div_ceil(tile_columns(radius));
        let tiles_y = height.div_ceil(layout.tile_rows(radius));
        Self {
            planes,
            height,
            width,
            count: CubeCount::Static(tiles_x as u32, tiles_y as u32, planes as u32),
            dim: walk_cube_dim(layout),
            cubes: tiles_x * tiles_y * planes,
        }
    }
}

/// The slices that select the map region of an image-shaped `[batch, channels, ..]` tensor.
fn map_region(config: &SsimKernelConfig, shape: &Shape) -> Vec<Slice> {
    let crop = config.crop();
    shape
        .iter()
        .enumerate()
        .map(|(axis, &side)| {
            let end = if axis < 2 { side } else { side - crop };
            let start = if axis < 2 { 0 } else { crop };
            Slice::new(start as isize, Some(end as isize), 1)
        })
        .collect()
}

fn is_volume(tensor: &CubeTensor) -> bool {
    tensor.shape().num_dims() == 5
}

/// What a 3D op under a window mask gets: the API refuses it first.
const NO_3D_WINDOW_MASK: &str = "fused_ssim_masked: window masks are 2D only";

impl SsimBackend for CubeBackend {
    fn ssim_value(img1: CubeTensor, img2: CubeTensor, config: SsimKernelConfig) -> CubeTensor {
        if is_volume(&img1) {
            return forward_volume(img1, img2, config, None).0;
        }
        forward(img1, img2, None, config, None).0
    }

    fn ssim_value_with_partials(
        img1: CubeTensor,
        img2: CubeTensor,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> (CubeTensor, CubeTensor) {
        if is_volume(&img1) {
            return forward_volume(img1, img2, config, Some(targets));
        }
        forward(img1, img2, None, config, Some(targets))
    }

    fn ssim_backward(
        img1: CubeTensor,
        img2: CubeTensor,
        partials: CubeTensor,
        upstream: CubeTensor,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> CubeTensor {
        if is_volume(&img1) {
            return backward_volume(img1, img2, partials, upstream, config, targets);
        }
        backward(img1, img2, None, partials, upstream, config, targets)
    }

    fn ssim_window_masked_value(
        img1: CubeTensor,
        img2: CubeTensor,
        mask: CubeTensor,
        config: SsimKernelConfig,
    ) -> CubeTensor {
        assert!(!is_volume(&img1), "{NO_3D_WINDOW_MASK}");
        forward(img1, img2, Some(mask), config, None).0
    }

    fn ssim_window_masked_value_with_partials(
        img1: CubeTensor,
        img2: CubeTensor,
        mask: CubeTensor,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> (CubeTensor, CubeTensor) {
        assert!(!is_volume(&img1), "{NO_3D_WINDOW_MASK}");
        forward(img1, img2, Some(mask), config, Some(targets))
    }

    fn ssim_window_masked_backward(
        img1: CubeTensor,
        img2: CubeTensor,
        mask: CubeTensor,
        partials: CubeTensor,
        upstream: CubeTensor,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> CubeTensor {
        assert!(!is_volume(&img1), "{NO_3D_WINDOW_MASK}");
        backward(img1, img2, Some(mask), partials, upstream, config, targets)
    }

    fn ssim_value_unorm8(
        img1: CubeTensor,
        img2: CubeTensor,
        config: SsimKernelConfig,
    ) -> CubeTensor {
        // The kernels read img2 by its dtype: an integer one is `q / 255`.
        Self::ssim_value(img1, img2, config)
    }

    fn ssim_value_with_partials_unorm8(
        img1: CubeTensor,
        img2: CubeTensor,
        config: SsimKernelConfig,
    ) -> (CubeTensor, CubeTensor) {
        Self::ssim_value_with_partials(img1, img2, config, UNORM8_TARGETS)
    }

    fn ssim_backward_unorm8(
        img1: CubeTensor,
        img2: CubeTensor,
        partials: CubeTensor,
        upstream: CubeTensor,
        config: SsimKernelConfig,
    ) -> CubeTensor {
        Self::ssim_backward(img1, img2, partials, upstream, config, UNORM8_TARGETS)
    }
}
