//! The SSIM kernels of the report: the 2D forward and backward in each mode the ops launch, and
//! the 3D depth stages.

use burn::backend::cubecl::dtype_to_storage_type;
use burn_sad_kernels::ssim::{
    BackwardArgsCompilationArg, BackwardOutput, BackwardSourcesCompilationArg, COLUMNS,
    DepthArgsCompilationArg, DepthBackwardSourcesCompilationArg, ForwardArgsCompilationArg,
    ForwardOutput, ForwardSourcesCompilationArg, GradTargets, InputEncoding,
    InputStridesCompilationArg, SsimTerm, rounds, ssim_backward_kernel::SsimBackwardKernel,
    ssim_forward_kernel::SsimForwardKernel,
    ssim3d_depth_backward_kernel::Ssim3dDepthBackwardKernel,
    ssim3d_depth_forward_kernel::Ssim3dDepthForwardKernel,
};
use cubecl::ir::{ElemType, FloatKind, UIntKind};
use cubecl::prelude::{Float, Numeric};

use super::{CudaKernel, F32, KernelReportError, LoopTrips, OfflineCuda, Work, tensor};
use crate::ssim::backend::SsimKernelConfig;
use crate::ssim::backend::cube::variant::{
    DEPTH_LAYOUT, KernelInputs, backward_config, depth_backward_config, depth_cube_dim,
    depth_forward_config, forward_config, pixels_per_cube, walk_cube_dim,
};
use crate::ssim::{SsimMemory, SsimOptions};

/// The gradient a training loop asks for: the prediction's (img1).
const TRAIN: GradTargets = GradTargets {
    img1: true,
    img2: false,
};

/// One 2D variant: its name's suffix, the op's configuration, the inputs' storage types and
/// encoding, and whether a window mask weighs them.
struct Variant {
    suffix: &'static str,
    config: SsimKernelConfig,
    types: [ElemType; 2],
    encoding: InputEncoding,
    window_mask: bool,
}

impl Variant {
    fn new(suffix: &'static str, config: SsimKernelConfig) -> Self {
        Self {
            suffix,
            config,
            types: [F32, F32],
            encoding: InputEncoding::Float,
            window_mask: false,
        }
    }

    fn inputs(&self) -> KernelInputs {
        KernelInputs {
            img2_encoding: self.encoding,
            window_mask: self.window_mask,
            ..KernelInputs::PLAIN
        }
    }

    /// Arithmetic, the two inputs' storage types and the partial maps' (of a training forward
    /// and its backward; an inference forward's placeholder is f32).
    fn forward_types(&self, targets: Option<GradTargets>) -> [ElemType; 4] {
        let partials = match targets {
            Some(_) => dtype_to_storage_type(self.config.partials_dtype()),
            None => F32,
        };
        [F32, self.types[0], self.types[1], partials]
    }
}

/// The 2D variants: plain SSIM, L1 + SSIM, MS-SSIM's contrast-structure term, a window mask,
/// f16 inputs, an 8-bit target and partial maps stored as f16.
fn variants() -> Vec<Variant> {
    let plain = SsimKernelConfig::from(SsimOptions::default());
    let l1 = SsimKernelConfig {
        ssim_weight: 0.8,
        l1_weight: 0.2,
        ..plain
    };
    let contrast = SsimKernelConfig {
        term: SsimTerm::ContrastStructure,
        ..plain
    };
    let f16 = ElemType::Float(FloatKind::F16);
    vec![
        Variant::new("", plain),
        Variant::new(".l1", l1),
        Variant::new(".cs", contrast),
        Variant {
            window_mask: true,
            ..Variant::new(".masked", plain)
        },
        Variant {
            types: [f16, f16],
            ..Variant::new(".f16", plain)
        },
        Variant {
            types: [F32, ElemType::UInt(UIntKind::U8)],
            encoding: InputEncoding::Unorm8,
            ..Variant::new(".u8", plain)
        },
        Variant::new(
            ".half",
            SsimKernelConfig {
                memory: SsimMemory::StoreHalf,
                ..plain
            },
        ),
    ]
}

pub(super) fn kernels(device: &OfflineCuda) -> Result<Vec<CudaKernel>, KernelReportError> {
    let mut kernels = Vec::new();
    for variant in variants() {
        for (mode, targets) in [("infer", None), ("train", Some(TRAIN))] {
            // How partial maps are stored changes nothing in an inference forward.
            if targets.is_none() && variant.config.memory != SsimMemory::Store {
                continue;
            }
            kernels.push(forward(
                device,
                &variant,
                format!("ssim_forward.{mode}{}", variant.suffix),
                targets,
                ForwardOutput::TileSums,
            )?);
        }
        kernels.push(backward(
            device,
            &variant,
            format!("ssim_backward{}", variant.suffix),
            BackwardOutput::Gradients,
        )?);
    }
    let volume = Variant::new("", SsimKernelConfig::from(SsimOptions::default()));
    kernels.push(forward(
        device,
        &volume,
        "ssim3d_slices.forward".to_string(),
        None,
        ForwardOutput::Moments,
    )?);
    kernels.push(backward(
        device,
        &volume,
        "ssim3d_slices.backward".to_string(),
        BackwardOutput::BlurredPartials,
    )?);
    for (mode, targets) in [("infer", None), ("train", Some(TRAIN))] {
        kernels.push(depth_forward(device, &volume.config, mode, targets)?);
    }
    kernels.push(depth_backward(device, &volume.config)?);
    Ok(kernels)
}

/// The work of one cube of a 2D kernel: its tile's pixels, each unit walking `chunks` chunks
/// and, in each, taking `rounds` items of the pass across.
fn walk_work(layout: burn_sad_kernels::ssim::StripLayout, radius: usize) -> Work {
    Work {
        outputs: pixels_per_cube(layout, radius),
        unit: "pixel",
        loops: LoopTrips::Fixed(vec![layout.chunks, rounds(layout, radius)]),
    }
}

fn forward_sources<F: Float, I1: Numeric, I2: Numeric>() -> ForwardSourcesCompilationArg<F, I1, I2>
{
    ForwardSourcesCompilationArg {
        img1: tensor(),
        img2: tensor(),
        mask: tensor(),
        args: ForwardArgsCompilationArg {
            height: (),
            width: (),
            crop: (),
            planes_per_mask: (),
            ssim_scale: (),
            l1_scale: (),
            c1: (),
            c2: (),
        },
        strides: strides(),
    }
}

fn strides() -> InputStridesCompilationArg {
    InputStridesCompilationArg {
        img1_plane: (),
        img1_row: (),
        img2_plane: (),
        img2_row: (),
    }
}

fn forward(
    device: &OfflineCuda,
    variant: &Variant,
    name: String,
    targets: Option<GradTargets>,
    output: ForwardOutput,
) -> Result<CudaKernel, KernelReportError> {
    let config = forward_config(
        &device.properties,
        &variant.config,
        variant.inputs(),
        targets,
        output,
    );
    let dim = walk_cube_dim(config.layout);
    let work = walk_work(config.layout, config.radius);
    let kernel = kernel!(
        device,
        dim,
        SsimForwardKernel,
        forward_sources(),
        tensor(),
        tensor(),
        config,
        variant.forward_types(targets),
    );
    device.compile(name, dim, work, kernel)
}

fn backward(
    device: &OfflineCuda,
    variant: &Variant,
    name: String,
    output: BackwardOutput,
) -> Result<CudaKernel, KernelReportError> {
    let config = backward_config(
        &device.properties,
        &variant.config,
        variant.inputs(),
        TRAIN,
        output,
    );
    let dim = walk_cube_dim(config.layout);
    let work = walk_work(config.layout, config.radius);
    let [f, i1, i2, p] = variant.forward_types(Some(TRAIN));
    let sources: BackwardSourcesCompilationArg<_, _, _, _> = BackwardSourcesCompilationArg {
        img1: tensor(),
        img2: tensor(),
        mask: tensor(),
        partials: tensor(),
        upstream: tensor(),
        args: BackwardArgsCompilationArg {
            height: (),
            width: (),
            upstream_stride: (),
            planes_per_mask: (),
            ssim_scale: (),
            l1_scale: (),
        },
        strides: strides(),
    };
    let grads = if output == BackwardOutput::Gradients {
        i1
    } else {
        F32
    };
    let kernel = kernel!(
        device,
        dim,
        SsimBackwardKernel,
        sources,
        tensor(),
        config,
        [f, i1, i2, p, grads],
    );
    device.compile(name, dim, work, kernel)
}

fn depth_args() -> DepthArgsCompilationArg {
    DepthArgsCompilationArg {
        depth: (),
        height: (),
        width: (),
        chunks: (),
        crop: (),
        upstream_stride: (),
        ssim_scale: (),
        c1: (),
        c2: (),
    }
}

/// The work of one cube of a depth kernel: a voxel column per unit, `depth_chunk` deep.
fn depth_work() -> Work {
    Work {
        outputs: COLUMNS * DEPTH_LAYOUT.rows * DEPTH_LAYOUT.depth_chunk,
        unit: "voxel",
        loops: LoopTrips::Fixed(Vec::new()),
    }
}

fn depth_forward(
    device: &OfflineCuda,
    config: &SsimKernelConfig,
    mode: &str,
    targets: Option<GradTargets>,
) -> Result<CudaKernel, KernelReportError> {
    let dim = depth_cube_dim();
    let kernel = kernel!(
        device,
        dim,
        Ssim3dDepthForwardKernel,
        tensor(),
        tensor(),
        tensor(),
        depth_args(),
        depth_forward_config(config, targets),
        [F32, F32],
    );
    device.compile(format!("ssim3d_depth.{mode}"), dim, depth_work(), kernel)
}

fn depth_backward(
    device: &OfflineCuda,
    config: &SsimKernelConfig,
) -> Result<CudaKernel, KernelReportError> {
    let dim = depth_cube_dim();
    let sources: DepthBackwardSourcesCompilationArg<_, _, _> = DepthBackwardSourcesCompilationArg {
        img1: tensor(),
        img2: tensor(),
        blurred: tensor(),
        upstream: tensor(),
        args: depth_args(),
    };
    let kernel = kernel!(
        device,
        dim,
        Ssim3dDepthBackwardKernel,
        sources,
        tensor(),
        depth_backward_config(config, TRAIN, InputEncoding::Float),
        [F32; 4],
    );
    device.compile(
        "ssim3d_depth.backward".to_string(),
        dim,
        depth_work(),
        kernel,
    )
}
