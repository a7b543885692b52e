//! What a device runs: this crate's CubeCL kernels or the reference ops, each kernel family,
//! the SAD backward's plane sums, f16 storage, and where its memory lives.

use burn::tensor::Device;

use super::{DeviceError, KernelFamily};

/// Whether tensors on `device` run this crate's CubeCL kernels rather than the reference ops.
pub fn uses_fused_kernels(device: &Device) -> bool {
    #[cfg(feature = "cube")]
    {
        matches!(
            device.as_dispatch().clone().inner(),
            burn::backend::DispatchDevice::Cube(_)
        )
    }
    #[cfg(not(feature = "cube"))]
    {
        let _ = device;
        false
    }
}

/// Whether the SAD backward's plane sums can run on `device` (see
/// [`BackwardStrategy`](crate::sad::BackwardStrategy)): where CubeCL marks the device's compiler
/// as lowering plane operations to the target's own in any control flow (CUDA, HIP, Metal, the
/// SPIR-V compiler of the `vulkan` feature on any Vulkan device, CPU adapters too). WGSL has
/// subgroups but takes no subgroup id in a two-dimensional workgroup, so the default `wgpu`
/// runtime runs without them.
pub fn has_plane_sums(device: &Device) -> bool {
    #[cfg(feature = "cube")]
    if let burn::backend::DispatchDevice::Cube(cube) = device.as_dispatch().clone().inner() {
        let capabilities = crate::runtime::capabilities::Capabilities::new(&cube.client(), &cube);
        return crate::sad::plane_sums_possible(&capabilities);
    }
    let _ = device;
    false
}

/// Whether this crate's kernels can run on `device`; `Err` says why not and what to do. Today the one such device is a Vulkan device without explicit workgroup layout
/// (lavapipe, many integrated GPUs) on the `vulkan` feature with the crates.io `cubecl-spirv`
/// 0.11.3, whose SPIR-V its driver crashes on (see the crate documentation); every op refuses it
/// with this line instead of launching. Devices that run the reference ops (Flex) are fine.
/// Opens the device.
///
/// ```
/// let device = burn::tensor::Device::default();
/// burn_sad::device::kernel_support(&device)?;
/// # Ok::<(), burn_sad::device::DeviceError>(())
/// ```
pub fn kernel_support(device: &Device) -> Result<(), DeviceError> {
    #[cfg(feature = "vulkan")]
    if let burn::backend::DispatchDevice::Cube(cube) = device.as_dispatch().clone().inner()
        && let Some(problem) = crate::runtime::vulkan_check::shared_memory_problem(&cube.client())
    {
        return Err(DeviceError::Driver(problem));
    }
    let _ = device;
    Ok(())
}

/// Whether `family`'s kernels can run on `device`; `Err` holds one line that names what the
/// device lacks and what to use instead. Devices that run the reference ops (Flex) run every
/// family. Also refuses what [`kernel_support`] refuses.
///
/// ```
/// use burn_sad::device::{KernelFamily, family_support};
///
/// let device = burn::tensor::Device::default();
/// family_support(&device, KernelFamily::Ssim)?;
/// # Ok::<(), burn_sad::device::DeviceError>(())
/// ```
pub fn family_support(device: &Device, family: KernelFamily) -> Result<(), DeviceError> {
    families_support(device, &[family])
}

/// Whether every one of `families` runs on `device`: the first refusal's line. The ops ask on
/// every call, so the device's client is looked up only where a family reads its properties.
pub(crate) fn families_support(
    device: &Device,
    families: &[KernelFamily],
) -> Result<(), DeviceError> {
    kernel_support(device)?;
    #[cfg(feature = "cube")]
    if families.iter().any(|family| family.reads_properties())
        && let burn::backend::DispatchDevice::Cube(cube) = device.as_dispatch().clone().inner()
    {
        let client = cube.client();
        for &family in families {
            if let Some(what) =
                crate::runtime::kernel_families::missing(client.properties(), family)
            {
                return Err(DeviceError::MissingFeature { family, what });
            }
        }
    }
    let _ = (device, families);
    Ok(())
}

/// Whether `device` stores f16 values, which
/// [`SsimMemory::StoreHalf`](crate::ssim::SsimMemory::StoreHalf) needs; `Err` holds one line
/// that says what to use instead. Devices that run the reference ops need nothing.
pub(crate) fn half_storage_support(device: &Device) -> Result<(), DeviceError> {
    #[cfg(feature = "cube")]
    if let burn::backend::DispatchDevice::Cube(cube) = device.as_dispatch().clone().inner() {
        let f16 = cubecl::ir::ElemType::Float(cubecl::ir::FloatKind::F16);
        if !cube.client().properties().supports_type(f16) {
            return Err(DeviceError::NoHalfStorage);
        }
    }
    let _ = device;
    Ok(())
}

/// Whether `device` keeps its buffers in host memory, so that what it allocates comes out of
/// the same RAM as the host's: Flex, CubeCL's CPU runtime, a wgpu or Vulkan CPU adapter (a
/// device with no physical card behind it, as CubeCL identifies it). Opens the device.
pub fn memory_on_host(device: &Device) -> bool {
    #[cfg(feature = "cube")]
    let on_host = device
        .identity()
        .is_none_or(|identity| identity.physical.is_none());
    #[cfg(not(feature = "cube"))]
    let on_host = {
        let _ = device;
        true
    };
    on_host
}
