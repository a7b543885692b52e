//! The SSIM kernels' comptime configurations, chosen from a device's properties: what every 2D
//! launch compiles in (the 3D launches take the same kernels for their in-slice stage), and what
//! the CUDA kernel report builds without a device.

use burn_sad_kernels::ssim::{
    BackwardConfig, BackwardOutput, COLUMNS, DepthBackwardConfig, DepthForwardConfig, DepthLayout,
    ForwardConfig, ForwardOutput, GradTargets, InputEncoding, InputLayout, PairWrites, StripLayout,
    Upstream, WALK_COLUMNS, tile_columns,
};
use cubecl::CubeDim;
use cubecl::ir::DeviceProperties;

use crate::ssim::backend::SsimKernelConfig;

/// Bytes of one buffered statistic: the kernels' arithmetic type, f32.
pub(crate) const F32_BYTES: usize = 4;

/// What a launch's inputs are, apart from their shape: how img2 stores its values, how both
/// lie in their buffers, and whether a window mask weighs the statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KernelInputs {
    pub img2_encoding: InputEncoding,
    pub input_layout: InputLayout,
    pub window_mask: bool,
}

impl KernelInputs {
    /// Two contiguous float images and no mask: what a training loop hands the ops.
    #[cfg_attr(not(feature = "kernel-report"), allow(dead_code))]
    pub(crate) const PLAIN: Self = Self {
        img2_encoding: InputEncoding::Float,
        input_layout: InputLayout::Contiguous,
        window_mask: false,
    };
}

/// The forward's (`forward`) or the backward's layout of `config` for a kernel buffering `stats`
/// f32 values a pixel on a device of `properties`: its rows per walker, in whole chunks of the
/// window's height, and as many strips (at most its strips) as fit the device's shared memory.
pub(crate) fn strip_layout(
    properties: &DeviceProperties,
    config: &SsimKernelConfig,
    forward: bool,
    stats: usize,
) -> StripLayout {
    let layout = config.layout;
    let (rows, mut strips) = if forward {
        (layout.forward_rows, layout.forward_strips)
    } else {
        (layout.backward_rows, layout.backward_strips)
    };
    let radius = config.radius;
    let chunks = rows.div_ceil(2 * radius + 1).max(1);
    let budget = properties.hardware.max_shared_memory_size;
    while strips > 1
        && (StripLayout { chunks, strips }).buffer_len(radius, stats) * F32_BYTES > budget
    {
        strips /= 2;
    }
    StripLayout { chunks, strips }
}

/// How the kernels' pass across stores its pixel pairs on a device of `properties`: through
/// plane shuffles where the device has plane operations of one plane width, else directly.
pub(crate) fn pair_writes(properties: &DeviceProperties) -> PairWrites {
    // Only the plane facts are read here, which do not depend on the device being a CUDA one.
    let capabilities =
        crate::runtime::capabilities::Capabilities::from_properties(properties, false);
    if capabilities.plane_ops && capabilities.plane_width.is_some() {
        PairWrites::Shuffled
    } else {
        PairWrites::Direct
    }
}

/// The cube of a 2D kernel under `layout`: a walker per column of the tile, `strips` deep.
pub(crate) fn walk_cube_dim(layout: StripLayout) -> CubeDim {
    CubeDim::new_2d(WALK_COLUMNS as u32, layout.strips as u32)
}

/// The output pixels one cube of a 2D kernel covers under `layout` at `radius`.
#[cfg_attr(not(feature = "kernel-report"), allow(dead_code))]
pub(crate) fn pixels_per_cube(layout: StripLayout, radius: usize) -> usize {
    tile_columns(radius) * layout.tile_rows(radius)
}

/// The forward kernel's configuration on a device of `properties`: `targets` for a training
/// forward (the partial maps it stores), `output` what it writes.
pub(crate) fn forward_config(
    properties: &DeviceProperties,
    config: &SsimKernelConfig,
    inputs: KernelInputs,
    targets: Option<GradTargets>,
    output: ForwardOutput,
) -> ForwardConfig {
    let stats = ForwardConfig::stats_with(inputs.window_mask);
    ForwardConfig {
        radius: config.radius,
        sigma_bits: config.sigma_bits,
        layout: strip_layout(properties, config, true, stats),
        term: config.term,
        l1: config.has_l1(),
        targets,
        output,
        img2_encoding: inputs.img2_encoding,
        input_layout: inputs.input_layout,
        window_mask: inputs.window_mask,
        writes: pair_writes(properties),
    }
}

/// The backward kernel's configuration on a device of `properties`, for the partial maps of
/// `targets`; `output` says whether it forms the gradients (2D) or blurs the maps (3D).
pub(crate) fn backward_config(
    properties: &DeviceProperties,
    config: &SsimKernelConfig,
    inputs: KernelInputs,
    targets: GradTargets,
    output: BackwardOutput,
) -> BackwardConfig {
    BackwardConfig {
        radius: config.radius,
        sigma_bits: config.sigma_bits,
        layout: strip_layout(properties, config, false, targets.partial_count()),
        l1: config.has_l1(),
        targets,
        output,
        upstream: upstream_kind(config),
        img2_encoding: inputs.img2_encoding,
        input_layout: inputs.input_layout,
        window_mask: inputs.window_mask,
        writes: pair_writes(properties),
    }
}

/// Depth-stage tiling of the 3D kernels: 32 × 8 voxel columns per cube, 16 slices per unit (a
/// 26-slice window pass for 16 outputs at radius 5).
pub(crate) const DEPTH_LAYOUT: DepthLayout = DepthLayout {
    rows: 8,
    depth_chunk: 16,
};

/// The cube of the depth kernels: a unit per voxel column of a `COLUMNS × rows` tile.
pub(crate) fn depth_cube_dim() -> CubeDim {
    CubeDim::new_2d(COLUMNS as u32, DEPTH_LAYOUT.rows as u32)
}

/// The depth forward's configuration: `targets` for a training forward.
pub(crate) fn depth_forward_config(
    config: &SsimKernelConfig,
    targets: Option<GradTargets>,
) -> DepthForwardConfig {
    DepthForwardConfig {
        radius: config.radius,
        sigma_bits: config.sigma_bits,
        layout: DEPTH_LAYOUT,
        term: config.term,
        targets,
        write_map: config.is_map(),
    }
}

/// The depth backward's configuration for the partial maps of `targets`, img2 stored as
/// `img2_encoding` says.
pub(crate) fn depth_backward_config(
    config: &SsimKernelConfig,
    targets: GradTargets,
    img2_encoding: InputEncoding,
) -> DepthBackwardConfig {
    DepthBackwardConfig {
        radius: config.radius,
        sigma_bits: config.sigma_bits,
        layout: DEPTH_LAYOUT,
        targets,
        map_upstream: config.is_map(),
        img2_encoding,
    }
}

/// The backward's upstream gradient for `config`: one per pixel of a map, else one per plane
/// (or one for all).
fn upstream_kind(config: &SsimKernelConfig) -> Upstream {
    if config.is_map() {
        Upstream::PerPixel
    } else {
        Upstream::PerPlane
    }
}
