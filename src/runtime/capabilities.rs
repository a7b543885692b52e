//! What the kernels' variants need to know of a device, read from its CubeCL properties
//! (`client.properties()`) and its kind (`cubecl::Device`), for the client at hand on every
//! launch: never from the runtime's name, so a process with devices of two kinds gives each its
//! own choice.

use burn_cubecl::tensor::CubeTensor;
use cubecl::client::Client;
use cubecl::ir::features::{AtomicUsage, Plane};
use cubecl::ir::{DeviceProperties, ElemType, FloatKind, Type};

/// The facts the launches choose their variants by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Capabilities {
    /// CubeCL marks the device as having plane operations (`Plane::Ops`): a GPU with subgroups.
    pub plane_ops: bool,
    /// The plane width where every plane of the device has the same one.
    pub plane_width: Option<u32>,
    /// CubeCL compiles for the device to the target's own instructions, plane operations in any
    /// control flow included (`Plane::NonUniformControlFlow`): CUDA, HIP, Metal, and CubeCL's
    /// SPIR-V compiler, whose subgroup operations also run on Vulkan CPU adapters (lavapipe),
    /// which CubeCL does not mark with `Plane::Ops`. Not the WGSL compiler, which takes no
    /// subgroup id in a two-dimensional workgroup and no f32 atomics in workgroup memory (naga
    /// refuses them).
    pub native_compiler: bool,
    /// The device adds f32 atomically in global memory (CubeCL's f32 atomic `Add`).
    pub float_atomic_add: bool,
    /// The device is compiled for through NVPTX (a CUDA device), where the patched cubecl-llvm's
    /// options (occupancy hint, full plane masks) apply.
    pub nvptx: bool,
}

impl Capabilities {
    /// The capabilities of `tensor`'s device.
    pub(crate) fn of(tensor: &CubeTensor) -> Self {
        Self::new(&tensor.client, &tensor.device)
    }

    /// The capabilities of `device`, whose client is `client`.
    pub(crate) fn new(client: &Client, device: &cubecl::Device) -> Self {
        Self::from_properties(
            client.properties(),
            matches!(device, cubecl::Device::Cuda(_)),
        )
    }

    /// The capabilities of a device of `properties`; `nvptx` where it is a CUDA device.
    pub(crate) fn from_properties(properties: &DeviceProperties, nvptx: bool) -> Self {
        let plane = properties.features.plane;
        let hardware = &properties.hardware;
        Self {
            plane_ops: plane.contains(Plane::Ops),
            plane_width: (hardware.plane_size_min == hardware.plane_size_max)
                .then_some(hardware.plane_size_max),
            native_compiler: Self::compiles_natively(properties),
            float_atomic_add: properties
                .atomic_type_usage(Type::atomic(ElemType::Float(FloatKind::F32)))
                .contains(AtomicUsage::Add),
            nvptx,
        }
    }

    /// Whether CubeCL compiles for a device of `properties` natively (see
    /// [`native_compiler`](Self::native_compiler)).
    pub(crate) fn compiles_natively(properties: &DeviceProperties) -> bool {
        properties
            .features
            .plane
            .contains(Plane::NonUniformControlFlow)
    }

    /// The device adds f32 atomically in shared memory too: it adds f32 atomically and its
    /// compiler is a native one ([`native_compiler`](Self::native_compiler)).
    pub(crate) fn shared_float_atomic_add(&self) -> bool {
        self.float_atomic_add && self.native_compiler
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::Capabilities;
    use cubecl::ir::features::{AtomicUsage, Plane};
    use cubecl::ir::{DeviceProperties, ElemType, FloatKind, Type};

    /// Properties as CubeCL's runtimes register them for a GPU with planes of 32 and f32 atomics
    /// (CUDA) and for WGSL on a CPU adapter (no plane marks, planes of 8 to 128).
    pub(crate) fn properties(gpu: bool) -> DeviceProperties {
        if !gpu {
            return burn_sad_kernels::offline::offline_properties((8, 128), 4);
        }
        let mut properties = burn_sad_kernels::offline::offline_properties((32, 32), 4);
        properties.features.plane.insert(Plane::Ops);
        properties
            .features
            .plane
            .insert(Plane::NonUniformControlFlow);
        properties.register_atomic_type_usage(
            Type::atomic(ElemType::Float(FloatKind::F32)),
            AtomicUsage::Add | AtomicUsage::LoadStore,
        );
        properties
    }

    #[test]
    fn each_device_gets_its_own_facts() {
        let gpu = Capabilities::from_properties(&properties(true), true);
        let cpu = Capabilities::from_properties(&properties(false), false);
        assert!(gpu.plane_ops && gpu.native_compiler && gpu.shared_float_atomic_add() && gpu.nvptx);
        assert_eq!(gpu.plane_width, Some(32));
        assert!(!cpu.plane_ops && !cpu.native_compiler && !cpu.float_atomic_add && !cpu.nvptx);
        assert_eq!(cpu.plane_width, None);
    }
}
