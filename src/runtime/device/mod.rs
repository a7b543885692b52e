//! Choosing the device the CLI and examples run on, and whether a device runs this crate's
//! CubeCL kernels ([`uses_fused_kernels`], which every op of both capabilities asks).
//!
//! `auto` takes the best compiled-in runtime that answers: CUDA, ROCm, a Vulkan (SPIR-V) GPU, a
//! wgpu GPU adapter, then a wgpu or Vulkan CPU adapter (e.g. Mesa lavapipe), then Flex, the pure-Rust CPU backend, which runs the
//! reference ops. Each candidate is probed with a tiny round trip, so a missing driver costs one
//! warning instead of a crash.
//!
//! ```
//! use burn_sad::device::{DeviceChoice, select_device, uses_fused_kernels};
//!
//! // `$BURN_SAD_DEVICE` if set (auto, cuda, wgpu, vulkan, flex, ...), else the best found.
//! let (device, description) = select_device(DeviceChoice::from_env()?)?;
//! println!("{description}: CubeCL kernels {}", uses_fused_kernels(&device));
//! # Ok::<(), String>(())
//! ```

use std::str::FromStr;

use burn::tensor::{Device, Tensor};

pub use crate::kernel_families::KernelFamily;

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
        let capabilities = crate::capabilities::Capabilities::new(&cube.client(), &cube);
        return crate::sad::plane_sums_possible(&capabilities);
    }
    let _ = device;
    false
}

/// Whether this crate's kernels can run on `device`; `Err` holds one line that says why not and
/// what to do. Today the one such device is a Vulkan device without explicit workgroup layout
/// (lavapipe, many integrated GPUs) on the `vulkan` feature with the crates.io `cubecl-spirv`
/// 0.11.3, whose SPIR-V its driver crashes on (see the crate documentation); every op refuses it
/// with this line instead of launching. Devices that run the reference ops (Flex) are fine.
/// Opens the device.
///
/// ```
/// let device = burn::tensor::Device::default();
/// burn_sad::device::kernel_support(&device)?;
/// # Ok::<(), String>(())
/// ```
pub fn kernel_support(device: &Device) -> Result<(), String> {
    #[cfg(feature = "vulkan")]
    if let burn::backend::DispatchDevice::Cube(cube) = device.as_dispatch().clone().inner()
        && let Some(problem) = crate::vulkan_check::shared_memory_problem(&cube.client())
    {
        return Err(problem);
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
/// # Ok::<(), String>(())
/// ```
pub fn family_support(device: &Device, family: KernelFamily) -> Result<(), String> {
    families_support(device, &[family])
}

/// Whether every one of `families` runs on `device`: the first refusal's line. The ops ask on
/// every call, so the device's client is looked up only where a family reads its properties.
pub(crate) fn families_support(device: &Device, families: &[KernelFamily]) -> Result<(), String> {
    kernel_support(device)?;
    #[cfg(feature = "cube")]
    if families.iter().any(|family| family.reads_properties())
        && let burn::backend::DispatchDevice::Cube(cube) = device.as_dispatch().clone().inner()
    {
        let client = cube.client();
        for &family in families {
            if let Some(what) = crate::kernel_families::missing(client.properties(), family) {
                return Err(format!(
                    "this device cannot run the {family} kernels: it has no {what}; use a Vulkan \
                     driver (Mesa's lavapipe on a CPU), a CUDA or ROCm GPU, or `--device flex`"
                ));
            }
        }
    }
    let _ = (device, families);
    Ok(())
}

/// Whether `device` stores f16 values, which
/// [`SsimMemory::StoreHalf`](crate::ssim::SsimMemory::StoreHalf) needs; `Err` holds one line
/// that says what to use instead. Devices that run the reference ops need nothing.
pub(crate) fn half_storage_support(device: &Device) -> Result<(), String> {
    #[cfg(feature = "cube")]
    if let burn::backend::DispatchDevice::Cube(cube) = device.as_dispatch().clone().inner() {
        let f16 = cubecl::ir::ElemType::Float(cubecl::ir::FloatKind::F16);
        if !cube.client().properties().supports_type(f16) {
            return Err(
                "this device stores no f16 values, which SsimMemory::StoreHalf needs; \
                        use SsimMemory::Store"
                    .to_string(),
            );
        }
    }
    let _ = device;
    Ok(())
}

/// The environment variable that sets the default of `--device`.
pub const DEVICE_ENV: &str = "BURN_SAD_DEVICE";

/// A device the user can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The best runtime that works on this machine.
    Auto,
    /// CUDA device 0 (`cuda` feature).
    Cuda,
    /// ROCm/HIP device 0 (`rocm` feature).
    Rocm,
    /// The wgpu adapter wgpu prefers (`wgpu` feature).
    Wgpu,
    /// wgpu's CPU adapter, e.g. lavapipe (`wgpu` feature).
    WgpuCpu,
    /// wgpu pinned to Vulkan, SPIR-V code generation (`vulkan` feature).
    Vulkan,
    /// wgpu pinned to Metal (`metal` feature).
    Metal,
    /// The CubeCL CPU runtime (`cpu` feature).
    Cpu,
    /// Flex, the pure-Rust CPU backend: reference ops, no fused kernels (`flex` feature).
    Flex,
}

impl FromStr for DeviceChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "auto" => Self::Auto,
            "cuda" => Self::Cuda,
            "rocm" => Self::Rocm,
            "wgpu" => Self::Wgpu,
            "wgpu-cpu" => Self::WgpuCpu,
            "vulkan" => Self::Vulkan,
            "metal" => Self::Metal,
            "cpu" => Self::Cpu,
            "flex" => Self::Flex,
            other => {
                return Err(format!(
                    "unknown device `{other}`: expected auto, cuda, rocm, wgpu, wgpu-cpu, vulkan, metal, cpu or flex"
                ));
            }
        })
    }
}

impl DeviceChoice {
    /// The choice named by [`DEVICE_ENV`], or `Auto`.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var(DEVICE_ENV) {
            Ok(value) if !value.is_empty() => value.parse(),
            _ => Ok(Self::Auto),
        }
    }

    /// What this choice is, as a person reads it (`Auto` has no device of its own).
    pub fn label(self) -> &'static str {
        match self {
            Self::Auto => "the best device found",
            Self::Cuda => "CUDA GPU 0",
            Self::Rocm => "ROCm GPU 0",
            Self::Wgpu => "wgpu, default adapter",
            Self::WgpuCpu => "wgpu, CPU adapter",
            Self::Vulkan => "Vulkan (SPIR-V), default adapter",
            Self::Metal => "Metal, default GPU",
            Self::Cpu => "CubeCL CPU runtime",
            Self::Flex => "Flex, CPU reference ops",
        }
    }

    /// The device for this choice, unprobed; `None` when its feature is not compiled in.
    pub fn device(self) -> Option<Device> {
        #[allow(unused_imports)]
        use burn::tensor::DeviceKind;
        match self {
            Self::Auto => None,
            #[cfg(feature = "cuda")]
            Self::Cuda => Some(Device::cuda(0usize)),
            #[cfg(feature = "rocm")]
            Self::Rocm => Some(Device::rocm(0usize)),
            #[cfg(feature = "wgpu")]
            Self::Wgpu => Some(Device::wgpu(DeviceKind::DefaultDevice)),
            #[cfg(feature = "wgpu")]
            Self::WgpuCpu => Some(Device::wgpu(DeviceKind::Cpu)),
            #[cfg(feature = "vulkan")]
            Self::Vulkan => Some(Device::vulkan(DeviceKind::DefaultDevice)),
            #[cfg(feature = "metal")]
            Self::Metal => Some(Device::metal(DeviceKind::DefaultDevice)),
            #[cfg(feature = "cpu")]
            Self::Cpu => Some(Device::cpu()),
            #[cfg(feature = "flex")]
            Self::Flex => Some(Device::flex()),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
}

/// Resolves a choice to a working device, with a short description of it as a person reads it
/// (`wgpu, CPU adapter`, `CUDA GPU 0`, …).
///
/// An explicit choice that is not compiled in, does not initialise or cannot run every
/// [`KernelFamily`] is an error; `Auto` falls back along the chain in the module docs, passing
/// over (with a warning) a device that cannot run them, and warns on stderr when it lands on
/// Flex. [`select_device_for`] asks for fewer families.
pub fn select_device(choice: DeviceChoice) -> Result<(Device, String), String> {
    select_device_for(choice, &KernelFamily::ALL)
}

/// [`select_device`] for work that runs only `families`' kernels: a device that runs those is
/// taken even where it cannot run the others.
///
/// ```
/// use burn_sad::device::{DeviceChoice, KernelFamily, select_device_for};
///
/// let (device, description) = select_device_for(DeviceChoice::Auto, &[KernelFamily::Ssim])?;
/// println!("SSIM on {description}");
/// # Ok::<(), String>(())
/// ```
// Each runtime compiled in pushes its candidates under its own `cfg`, which `vec![..]` cannot
// express.
#[allow(clippy::vec_init_then_push)]
pub fn select_device_for(
    choice: DeviceChoice,
    families: &[KernelFamily],
) -> Result<(Device, String), String> {
    if choice != DeviceChoice::Auto {
        let device = choice
            .device()
            .ok_or_else(|| format!("device `{choice:?}` is not compiled into this build"))?;
        open(&device, &format!("{choice:?}"), families)?;
        return Ok((device, choice.label().to_owned()));
    }
    #[allow(unused_imports)]
    use burn::tensor::DeviceKind;
    #[allow(unused_mut)]
    let mut candidates: Vec<(Device, &str)> = Vec::new();
    #[cfg(feature = "cuda")]
    candidates.push((Device::cuda(0usize), DeviceChoice::Cuda.label()));
    #[cfg(feature = "rocm")]
    candidates.push((Device::rocm(0usize), DeviceChoice::Rocm.label()));
    // Vulkan's SPIR-V path before WGSL on the same GPU; a CPU adapter only after every GPU.
    #[cfg(feature = "vulkan")]
    candidates.extend([
        (
            Device::vulkan(DeviceKind::DiscreteGpu(0)),
            "Vulkan (SPIR-V), discrete GPU 0",
        ),
        (
            Device::vulkan(DeviceKind::IntegratedGpu(0)),
            "Vulkan (SPIR-V), integrated GPU 0",
        ),
    ]);
    #[cfg(feature = "wgpu")]
    candidates.extend([
        (
            Device::wgpu(DeviceKind::DiscreteGpu(0)),
            "wgpu, discrete GPU 0",
        ),
        (
            Device::wgpu(DeviceKind::IntegratedGpu(0)),
            "wgpu, integrated GPU 0",
        ),
        (Device::wgpu(DeviceKind::Cpu), DeviceChoice::WgpuCpu.label()),
    ]);
    #[cfg(feature = "vulkan")]
    candidates.push((
        Device::vulkan(DeviceKind::Cpu),
        "Vulkan (SPIR-V), CPU adapter",
    ));
    #[cfg(feature = "metal")]
    candidates.push((
        Device::metal(DeviceKind::DefaultDevice),
        DeviceChoice::Metal.label(),
    ));
    let usable = |device: &Device, label: &str| {
        probe(device)
            && families_support(device, families)
                .inspect_err(|problem| eprintln!("warning: {label} skipped: {problem}"))
                .is_ok()
    };
    if let Some((device, label)) = candidates
        .into_iter()
        .find(|(device, label)| usable(device, label))
    {
        return Ok((device, label.to_owned()));
    }
    #[cfg(feature = "flex")]
    {
        eprintln!(
            "warning: no GPU or wgpu adapter found; running on Flex (CPU reference ops, slow)"
        );
        Ok((Device::flex(), DeviceChoice::Flex.label().to_owned()))
    }
    #[cfg(not(feature = "flex"))]
    Err(
        "no compiled-in device initialised (build with the `flex` feature for a CPU fallback)"
            .into(),
    )
}

/// Most devices `--devices all` looks for.
const MAX_GPUS: usize = 64;

impl DeviceChoice {
    /// GPU `index` of this choice's runtime (CUDA, ROCm; for wgpu and Vulkan the `index`-th
    /// discrete GPU) with its label; the other choices have only index 0. `None` where the
    /// runtime is not compiled in or has no such index.
    pub fn device_at(self, index: usize) -> Option<(Device, String)> {
        #[allow(unused_imports)]
        use burn::tensor::DeviceKind;
        if index == 0 {
            return self
                .device()
                .map(|device| (device, self.label().to_owned()));
        }
        match self {
            #[cfg(feature = "cuda")]
            Self::Cuda => Some((Device::cuda(index), format!("CUDA GPU {index}"))),
            #[cfg(feature = "rocm")]
            Self::Rocm => Some((Device::rocm(index), format!("ROCm GPU {index}"))),
            #[cfg(feature = "wgpu")]
            Self::Wgpu => Some((
                Device::wgpu(DeviceKind::DiscreteGpu(index)),
                format!("wgpu, discrete GPU {index}"),
            )),
            #[cfg(feature = "vulkan")]
            Self::Vulkan => Some((
                Device::vulkan(DeviceKind::DiscreteGpu(index)),
                format!("Vulkan (SPIR-V), discrete GPU {index}"),
            )),
            _ => None,
        }
    }
}

/// The devices a `--devices` list names, each probed: comma-separated entries `KIND[:N]` (a
/// [`DeviceChoice`] name and a GPU index, e.g. `cuda:0,cuda:1`; `auto` takes what
/// [`select_device`] picks), or `all`: every CUDA GPU that answers, else every ROCm GPU. An
/// entry may repeat (more workers on one device). Each device must run every [`KernelFamily`];
/// [`select_devices_for`] asks for fewer.
pub fn select_devices(list: &str) -> Result<Vec<(Device, String)>, String> {
    select_devices_for(list, &KernelFamily::ALL)
}

/// [`select_devices`] for work that runs only `families`' kernels.
pub fn select_devices_for(
    list: &str,
    families: &[KernelFamily],
) -> Result<Vec<(Device, String)>, String> {
    if list.trim() == "all" {
        for choice in [DeviceChoice::Cuda, DeviceChoice::Rocm] {
            let found: Vec<(Device, String)> = (0..MAX_GPUS)
                .map_while(|index| choice.device_at(index).filter(|(d, _)| probe(d)))
                .collect();
            if !found.is_empty() {
                return Ok(found);
            }
        }
        return Err("--devices all found no CUDA or ROCm GPU in this build and machine".into());
    }
    list.split(',')
        .map(|entry| {
            let entry = entry.trim();
            let (kind, index) = match entry.split_once(':') {
                Some((kind, index)) => {
                    let index = index.parse::<usize>().map_err(|_| {
                        format!("`{entry}`: the index after `:` must be a whole number")
                    })?;
                    (kind, index)
                }
                None => (entry, 0),
            };
            let choice: DeviceChoice = kind.parse()?;
            if choice == DeviceChoice::Auto {
                return select_device_for(choice, families);
            }
            let (device, label) = choice
                .device_at(index)
                .ok_or_else(|| format!("device `{entry}` is not compiled into this build"))?;
            open(&device, entry, families)?;
            Ok((device, label))
        })
        .collect()
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

/// Opens a device the user asked for by `name`: it must initialise ([`probe`]) and run
/// `families`' kernels ([`family_support`]); the error names it.
fn open(device: &Device, name: &str, families: &[KernelFamily]) -> Result<(), String> {
    if !probe(device) {
        return Err(format!("device `{name}` failed to initialise"));
    }
    families_support(device, families).map_err(|problem| format!("device `{name}`: {problem}"))
}

/// Whether a tiny tensor survives a round trip to `device`. Initialisation failures panic inside
/// the runtimes, so the probe catches them and keeps their messages off the terminal.
fn probe(device: &Device) -> bool {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let device = device.clone();
    let works = std::panic::catch_unwind(move || {
        Tensor::<1>::ones([4], &device)
            .try_to_vec_as::<f32>()
            .is_ok_and(|v| v == [1.0; 4])
    })
    .unwrap_or(false);
    std::panic::set_hook(hook);
    works
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_on_host_agrees_with_what_the_device_is() {
        let (device, description) = select_device(DeviceChoice::Auto).expect("a device");
        // Every CPU device this crate selects says so in its label; every GPU does not.
        assert_eq!(
            memory_on_host(&device),
            description.contains("CPU"),
            "{description}"
        );
    }
}
