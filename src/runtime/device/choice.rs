//! Choosing the device the CLI and examples run on: `auto`'s fallback chain, a named runtime,
//! or a `--devices` list.

use std::str::FromStr;

use burn::tensor::{Device, Tensor};

use super::support::families_support;
use super::{DeviceError, KernelFamily};

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
    type Err = DeviceError;

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
            other => return Err(DeviceError::Unknown(other.to_owned())),
        })
    }
}

impl DeviceChoice {
    /// The choice named by [`DEVICE_ENV`], or `Auto`.
    pub fn from_env() -> Result<Self, DeviceError> {
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
pub fn select_device(choice: DeviceChoice) -> Result<(Device, String), DeviceError> {
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
/// # Ok::<(), burn_sad::device::DeviceError>(())
/// ```
// Each runtime compiled in pushes its candidates under its own `cfg`, which `vec![..]` cannot
// express.
#[allow(clippy::vec_init_then_push)]
pub fn select_device_for(
    choice: DeviceChoice,
    families: &[KernelFamily],
) -> Result<(Device, String), DeviceError> {
    if choice != DeviceChoice::Auto {
        let device = choice
            .device()
            .ok_or_else(|| DeviceError::NotCompiledIn(format!("{choice:?}")))?;
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
    Err(DeviceError::NoDevice)
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
pub fn select_devices(list: &str) -> Result<Vec<(Device, String)>, DeviceError> {
    select_devices_for(list, &KernelFamily::ALL)
}

/// [`select_devices`] for work that runs only `families`' kernels.
pub fn select_devices_for(
    list: &str,
    families: &[KernelFamily],
) -> Result<Vec<(Device, String)>, DeviceError> {
    if list.trim() == "all" {
        for choice in [DeviceChoice::Cuda, DeviceChoice::Rocm] {
            let found: Vec<(Device, String)> = (0..MAX_GPUS)
                .map_while(|index| choice.device_at(index).filter(|(d, _)| probe(d)))
                .collect();
            if !found.is_empty() {
                return Ok(found);
            }
        }
        return Err(DeviceError::NoGpus);
    }
    list.split(',')
        .map(|entry| {
            let entry = entry.trim();
            let (kind, index) = match entry.split_once(':') {
                Some((kind, index)) => {
                    let index = index
                        .parse::<usize>()
                        .map_err(|_| DeviceError::BadIndex(entry.to_owned()))?;
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
                .ok_or_else(|| DeviceError::NotCompiledIn(entry.to_owned()))?;
            open(&device, entry, families)?;
            Ok((device, label))
        })
        .collect()
}

/// Opens a device the user asked for by `name`: it must initialise ([`probe`]) and run
/// `families`' kernels ([`family_support`]); the error names it.
fn open(device: &Device, name: &str, families: &[KernelFamily]) -> Result<(), DeviceError> {
    if !probe(device) {
        return Err(DeviceError::FailedToInitialise(name.to_owned()));
    }
    families_support(device, families).map_err(|problem| DeviceError::Refused {
        name: name.to_owned(),
        problem: Box::new(problem),
    })
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
    use crate::device::memory_on_host;

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
