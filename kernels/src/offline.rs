//! What a kernel compiled without a device needs (the browser viewer's WGSL export, the CUDA
//! kernel report): the properties of a device that is not at hand, and the compilation
//! arguments a launch would give.

use cubecl::ir::{
    DeviceIdentity, DeviceProperties, ElemType, FloatKind, HardwareProperties,
    MemoryDeviceProperties, features::Features,
};
use cubecl::prelude::{BufferCompilationArg, TensorCompilationArg, TensorMetaCompilationArg};

/// Properties of a device that is not at hand, with planes of `plane_sizes` (least, most) and
/// vectors of at most `max_vector_size` lanes, and no features: what the viewer compiles its
/// WGSL for (the kernels' expansion reads none of it), and what the kernel report and the
/// tests start from.
///
/// ```
/// let properties = burn_sad_kernels::offline::offline_properties((32, 32), 4);
/// assert_eq!(properties.hardware.plane_size_max, 32);
/// ```
pub fn offline_properties(plane_sizes: (u32, u32), max_vector_size: usize) -> DeviceProperties {
    DeviceProperties::new(
        Features::default(),
        MemoryDeviceProperties::new(u64::MAX, 256),
        HardwareProperties {
            load_width: 128,
            vector_register_count: None,
            plane_size_min: plane_sizes.0,
            plane_size_max: plane_sizes.1,
            max_bindings: 32,
            max_shared_memory_size: 16_384,
            max_cube_count: (u16::MAX as u32, u16::MAX as u32, u16::MAX as u32),
            max_units_per_cube: 256,
            max_cube_dim: (256, 256, 64),
            num_streaming_multiprocessors: None,
            num_tensor_cores: None,
            min_tensor_cores_dim: None,
            num_cpu_cores: None,
            last_level_cache_size: None,
            max_vector_size,
            cube_mma_reserved_shared_memory: 0,
        },
        cubecl::profile::TimingMethod::Device,
        DeviceIdentity {
            name: "offline".to_string(),
            fingerprint: "offline".to_string(),
            physical: None,
        },
    )
}

/// A tensor argument's compilation argument, for a kernel constructed without a launch: a
/// tensor compiles to no value of its own.
pub fn tensor_compilation_arg() -> TensorCompilationArg {
    TensorCompilationArg {
        meta: TensorMetaCompilationArg { len: (), rank: () },
        buffer: BufferCompilationArg { inplace: None },
    }
}

/// The kernels' f32, as their `#[define]` arguments take it, for a kernel constructed without a
/// launch.
pub const F32: ElemType = ElemType::Float(FloatKind::F32);
