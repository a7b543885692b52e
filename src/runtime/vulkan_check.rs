//! Vulkan devices on which the linked `cubecl-spirv` cannot run this crate's kernels.
//!
//! `cubecl-spirv` 0.11.3 (crates.io) declares shared memory wrongly where the device lacks
//! `VK_KHR_workgroup_memory_explicit_layout` (Mesa's lavapipe, many integrated and mobile GPUs):
//! the workgroup variable gets a pointer to a pointer as its type, and the driver may crash
//! compiling it, taking the process with it. burn-sad's workspace patches the crate
//! (`vendor/cubecl-spirv`); a dependent gets the release. So before the first kernel on a
//! SPIR-V device, the linked compiler compiles a probe kernel with shared memory for such a
//! device, on the host, and the module's workgroup variables are read back; where they are
//! wrong and the device lacks the extension, the ops refuse the device with one line that says
//! what to do, instead of handing the driver the module.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use burn_sad_kernels::probe::{PROBE_UNITS, shared_memory_probe_kernel::SharedMemoryProbeKernel};
use cubecl::client::Client;
use cubecl::ir::{AddressType, DeviceProperties};
use cubecl::prelude::*;
use cubecl::wgpu::vulkan::VkSpirvCompiler;
use cubecl::wgpu::wgpu;
use cubecl::{Compiler, WgpuCompilationOptions};

use crate::runtime::spirv_words::workgroup_variables_are_pointers;

/// The extension whose absence the 0.11.3 compiler mishandles.
const EXPLICIT_LAYOUT: &std::ffi::CStr = c"VK_KHR_workgroup_memory_explicit_layout";

/// Why `client`'s device cannot run the kernels, or `None` where it can (a device CubeCL's
/// SPIR-V compiler does not compile for, a fixed compiler, a device with the extension). Every
/// launch asks: the compiler is judged once per process, and only where it is wrong is each
/// device looked up (once, then remembered).
pub(crate) fn shared_memory_problem(client: &Client) -> Option<String> {
    if !compiled_by_spirv(client.properties()) || compiler_declares_shared_memory_correctly(client)
    {
        return None;
    }
    static SEEN: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    let identity = &client.properties().identity;
    let key = format!("{}/{}", identity.fingerprint, identity.name);
    let mut seen = SEEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    seen.entry(key)
        .or_insert_with(|| {
            (!has_explicit_layout(&identity.name, &identity.fingerprint)).then(|| {
                format!(
                    "the Vulkan device `{}` lacks {}, and the linked cubecl-spirv (0.11.3 from crates.io) \
                     writes shared memory for such devices as SPIR-V their drivers crash on: use burn-sad's \
                     `wgpu` feature on this device, or add `cubecl-spirv = {{ path = \"<burn-sad>/vendor/cubecl-spirv\" }}` \
                     under `[patch.crates-io]` in your Cargo.toml (see burn-sad's crate documentation)",
                    identity.name,
                    EXPLICIT_LAYOUT.to_string_lossy()
                )
            })
        })
        .clone()
}

/// Whether CubeCL compiles for a device of `properties` through its SPIR-V compiler: a wgpu
/// adapter (fingerprint `spirv_<vendor>_<device>`) whose compiler CubeCL marks as lowering plane
/// operations to the target's own, which on wgpu only the SPIR-V (and Metal's) compiler is;
/// WGSL, on an adapter the SPIR-V compiler does not take, is not.
fn compiled_by_spirv(properties: &DeviceProperties) -> bool {
    properties.identity.fingerprint.starts_with("spirv_")
        && crate::runtime::capabilities::Capabilities::compiles_natively(properties)
}

/// Whether the linked SPIR-V compiler declares a workgroup variable as a pointer to its array
/// when the device has no explicit layout (the default options), judged on the probe kernel.
fn compiler_declares_shared_memory_correctly(client: &Client) -> bool {
    static CORRECT: OnceLock<bool> = OnceLock::new();
    *CORRECT.get_or_init(|| {
        let settings = KernelSettings::new(
            *CubeDim::new_1d(PROBE_UNITS),
            ExecutionMode::Checked,
            AddressType::U32,
        );
        let tensor = TensorCompilationArg {
            meta: TensorMetaCompilationArg { len: (), rank: () },
            buffer: BufferCompilationArg { inplace: None },
        };
        let kernel = SharedMemoryProbeKernel::new(
            settings,
            client.properties_shared(),
            Arc::new(TargetProperties::default()),
            tensor,
        );
        // What a Vulkan device without explicit layout gets (see cubecl-wgpu's `register_features`).
        let mut options = WgpuCompilationOptions {
            supports_vulkan_compiler: true,
            ..WgpuCompilationOptions::default()
        };
        options.vulkan.max_spirv_version = (1, 3);
        options.vulkan.max_vector_size = 4;
        options.vulkan.push_constant_size = 128;
        match VkSpirvCompiler::default().compile(kernel.define(), &options) {
            Ok(compiled) => workgroup_variables_are_pointers(&compiled.assembled_module),
            // A compiler that cannot compile the probe will say so on the first real kernel.
            Err(_) => true,
        }
    })
}

/// Whether the Vulkan adapter CubeCL names `name` (fingerprint `spirv_<vendor>_<device>`) has
/// the explicit-layout extension; `true` where no adapter matches (nothing known against it).
fn has_explicit_layout(name: &str, fingerprint: &str) -> bool {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapters = cubecl::future::block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN));
    let Some(adapter) = adapters.iter().find(|adapter| {
        let info = adapter.get_info();
        info.name == name && format!("spirv_{}_{}", info.vendor, info.device) == fingerprint
    }) else {
        return true;
    };
    // SAFETY: the hal adapter is only read while `adapter` keeps it alive.
    unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }.is_none_or(|hal| {
        hal.physical_device_capabilities()
            .supports_extension(EXPLICIT_LAYOUT)
    })
}
