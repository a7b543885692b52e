//! Launches of the SSIM kernels on the CubeCL backend (every runtime).

use burn::backend::{TensorMetadata, cubecl::dtype_to_storage_type, ops::FloatTensorOps};
use burn::tensor::{DType, Shape, Slice};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::ssim::{
    BackwardArgsLaunch, BackwardOutput, BackwardSourcesLaunch, ForwardArgsLaunch, ForwardOutput,
    ForwardSourcesLaunch, GradTargets, InputEncoding, InputLayout, InputStridesLaunch, StripLayout,
    Upstream, ssim_backward_kernel, ssim_forward_kernel, tile_columns,
};
use cubecl::ir::ElemType;
use cubecl::{CubeCount, CubeDim};

pub(crate) mod variant;
mod volume;

use crate::runtime::launch::{empty_contiguous, empty_f32, expect_dims, launch_kernel};
use crate::ssim::backend::{KernelReduction, SsimBackend, SsimKernelConfig, stacked_shape};
use variant::{KernelInputs, backward_config, forward_config, walk_cube_dim};
use volume::{backward_volume, forward_volume};

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

/// How img2 stores its values: integers (u8, or i32 where the runtime has no 8-bit storage)
/// stand for `q / 255`.
pub(super) fn encoding(img2: &CubeTensor) -> InputEncoding {
    if img2.dtype.is_float() {
        InputEncoding::Float
    } else {
        InputEncoding::Unorm8
    }
}

/// Where an image's (batch, channel) planes and rows start in its buffer, in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PlaneStrides {
    plane: usize,
    row: usize,
}

impl PlaneStrides {
    /// The strides of `image` if the kernels can read it where it lies: rows of contiguous
    /// elements, and every axis above the rows stepping by whole planes (a contiguous tensor,
    /// one whose rows the runtime pitched, a window of a larger image). `None` otherwise.
    fn of(image: &CubeTensor) -> Option<Self> {
        if image.meta.is_tiled() || image.qparams.is_some() {
            return None;
        }
        let (shape, strides) = (image.meta.shape(), image.meta.strides());
        let rank = shape.num_dims();
        let (height, width) = (shape[rank - 2], shape[rank - 1]);
        if width > 1 && strides[rank - 1] != 1 {
            return None;
        }
        let row = if height > 1 { strides[rank - 2] } else { width };
        // The axes above the rows, innermost first (axes of one element step nowhere): the
        // first one's stride is the plane stride, each further one steps over the planes of
        // those inside it.
        let mut plane = None;
        let mut planes_inside = 1;
        for axis in (0..rank - 2).rev().filter(|&axis| shape[axis] > 1) {
            match plane {
                None => plane = Some(strides[axis]),
                Some(stride) if strides[axis] != stride * planes_inside => return None,
                Some(_) => {}
            }
            planes_inside *= shape[axis];
        }
        Some(Self {
            plane: plane.unwrap_or(height * row),
            row,
        })
    }

    /// `image` as the 2D kernels read it, with its strides: in place where [`Self::of`] allows,
    /// else made contiguous first.
    fn read(image: CubeTensor) -> (CubeTensor, Self) {
        if let Some(strides) = Self::of(&image) {
            return (image, strides);
        }
        let image = into_contiguous(image);
        let strides = Self::of(&image).expect("a contiguous tensor's planes");
        (image, strides)
    }

    /// How inputs at `img1` and `img2` lie, for images of `shape`: contiguous, sharing one set
    /// of strides, or each its own (one index computation a pixel per set).
    fn layout(img1: Self, img2: Self, shape: &Shape) -> InputLayout {
        let rank = shape.num_dims();
        let (height, width) = (shape[rank - 2], shape[rank - 1]);
        let contiguous = Self {
            plane: height * width,
            row: width,
        };
        if img1 == contiguous && img2 == contiguous {
            InputLayout::Contiguous
        } else if img1 == img2 {
            InputLayout::SharedStrides
        } else {
            InputLayout::OwnStrides
        }
    }
}

/// Both images as the 2D kernels read them: each one's strides and the layout they make.
#[derive(Clone, Copy, Debug)]
pub(super) struct InputPlanes {
    img1: PlaneStrides,
    img2: PlaneStrides,
    layout: InputLayout,
}

impl InputPlanes {
    /// `img1` and `img2` as the kernels read them: in place where [`PlaneStrides::of`] allows,
    /// else made contiguous first.
    pub(super) fn read(img1: CubeTensor, img2: CubeTensor) -> (CubeTensor, CubeTensor, Self) {
        let (img1, img1_strides) = PlaneStrides::read(img1);
        let (img2, img2_strides) = PlaneStrides::read(img2);
        let layout = PlaneStrides::layout(img1_strides, img2_strides, &img1.shape());
        let planes = Self {
            img1: img1_strides,
            img2: img2_strides,
            layout,
        };
        (img1, img2, planes)
    }

    /// What the kernels' configuration says of these inputs: img2's encoding (from `img2`, as
    /// [`read`](Self::read) returned it), the layout, and whether a window mask weighs them.
    pub(super) fn kernel_inputs(self, img2: &CubeTensor, window_mask: bool) -> KernelInputs {
        KernelInputs {
            img2_encoding: encoding(img2),
            input_layout: self.layout,
            window_mask,
        }
    }

    /// The kernels' strides argument.
    pub(super) fn launch(self) -> InputStridesLaunch {
        InputStridesLaunch::new(
            self.img1.plane,
            self.img1.row,
            self.img2.plane,
            self.img2.row,
        )
    }
}

/// The only gradient an integer img2 allows.
const UNORM8_TARGETS: GradTargets = GradTargets {
    img1: true,
    img2: false,
};

/// The gradients' dtype: the tracked inputs' (one dtype when both are tracked).
pub(super) fn grad_dtype(img1: &CubeTensor, img2: &CubeTensor, targets: GradTargets) -> DType {
    if targets.img1 { img1.dtype } else { img2.dtype }
}

/// The forward kernel's element types: f32 arithmetic, the two inputs' storage types, then the
/// partial maps' (`partials`, the tensor the kernel writes them to).
pub(super) fn forward_types(
    img1: &CubeTensor,
    img2: &CubeTensor,
    partials: &CubeTensor,
) -> [ElemType; 4] {
    [DType::F32, img1.dtype, img2.dtype, partials.dtype].map(dtype_to_storage_type)
}

/// The backward kernel's element types: [`forward_types`] (`partials`, the tensor it reads
/// them from), then the gradients' storage type.
pub(super) fn backward_types(
    img1: &CubeTensor,
    img2: &CubeTensor,
    partials: &CubeTensor,
    grads: DType,
) -> [ElemType; 5] {
    let [f, i1, i2, p] = forward_types(img1, img2, partials);
    [f, i1, i2, p, dtype_to_storage_type(grads)]
}

/// The backward's upstream gradient for `config`: one per pixel of a map, else one per plane
/// (or one for all).
pub(super) fn upstream_kind(config: &SsimKernelConfig) -> Upstream {
    if config.is_map() {
        Upstream::PerPixel
    } else {
        Upstream::PerPlane
    }
}

/// A window mask ready for the kernels: contiguous f32 planes, and how many image planes share
/// each of its planes (the channel count for a one-channel mask, else 1).
struct KernelMask {
    tensor: CubeTensor,
    planes_per_mask: usize,
}

impl KernelMask {
    /// Checks `mask` against the images' `shape` (`[batch, 1 or channels, height, width]`) for
    /// the kernels' unchecked reads.
    fn of(mask: CubeTensor, shape: &Shape, op: &str) -> Self {
        let mask = into_contiguous(mask);
        let dims = mask.shape();
        let channels = shape[1];
        let fits = dims.num_dims() == shape.num_dims()
            && dims[0] == shape[0]
            && (dims[1] == 1 || dims[1] == channels)
            && dims[2..] == shape[2..];
        assert!(
            fits && mask.dtype == DType::F32,
            "{op}: the mask is {:?} of {:?}, expected f32 [batch, 1 or channels, ..] of the images' {:?}",
            dims.as_slice(),
            mask.dtype,
            shape.as_slice()
        );
        let planes_per_mask = if dims[1] == 1 { channels } else { 1 };
        Self {
            tensor: mask,
            planes_per_mask,
        }
    }

    /// `mask` checked by [`KernelMask::of`], or without one a one-element placeholder the
    /// kernels do not read.
    fn new(mask: Option<CubeTensor>, images: &CubeTensor, op: &str) -> Self {
        match mask {
            Some(mask) => Self::of(mask, &images.shape(), op),
            None => Self {
                tensor: empty_f32(images, Shape::new([1])),
                planes_per_mask: 1,
            },
        }
    }
}

/// Runs the forward kernel; returns the mean SSIM and, when `targets` is given, the partials.
/// With a window `mask`, the statistics are normalised convolutions over its weights.
fn forward(
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
fn reduce_tile_sums(tile_sums: CubeTensor, config: SsimKernelConfig, planes: usize) -> CubeTensor {
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

/// A map's flat upstream gradient as an image-shaped tensor, zero outside the map region, for
/// the backward kernels' `map_upstream` mode.
fn map_upstream(upstream: CubeTensor, config: &SsimKernelConfig, shape: &Shape) -> CubeTensor {
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

fn is_volume(tensor: &CubeTensor) -> bool {
    tensor.shape().num_dims() == 5
}

/// What a 3D op under a window mask gets: the API refuses it first.
const NO_3D_WINDOW_MASK: &str = "fused_ssim_masked: window masks are 2D only";

/// Runs the 2D backward kernel: the tracked inputs' gradients, stacked (see
/// [`SsimBackend::ssim_backward`]); under a window `mask`, of the masked forward.
fn backward(
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
