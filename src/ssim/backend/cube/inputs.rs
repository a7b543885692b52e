//! What the SSIM kernels read: the images' planes and strides as the launches pass them, the
//! inputs' encodings and dtypes, the upstream gradient's kind, and a window mask.

use burn::backend::{TensorMetadata, cubecl::dtype_to_storage_type};
use burn::tensor::{DType, Shape};
use burn_cubecl::{kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::ssim::{GradTargets, InputEncoding, InputLayout, InputStridesLaunch};
use cubecl::ir::ElemType;

use super::variant::KernelInputs;
use crate::runtime::launch::empty_f32;

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
pub(super) const UNORM8_TARGETS: GradTargets = GradTargets {
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

/// A window mask ready for the kernels: contiguous f32 planes, and how many image planes share
/// each of its planes (the channel count for a one-channel mask, else 1).
pub(super) struct KernelMask {
    pub(super) tensor: CubeTensor,
    pub(super) planes_per_mask: usize,
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
    pub(super) fn new(mask: Option<CubeTensor>, images: &CubeTensor, op: &str) -> Self {
        match mask {
            Some(mask) => Self::of(mask, &images.shape(), op),
            None => Self {
                tensor: empty_f32(images, Shape::new([1])),
                planes_per_mask: 1,
            },
        }
    }
}
