//! The CUDA kernels the library launches, compiled to PTX on the host, without a GPU.
//!
//! Each [`CudaKernel`] is one variant as the ops launch it on a CUDA device of a given compute
//! capability: its comptime configuration chosen from that device's properties by the same
//! functions the launches call, expanded by CubeCL and lowered through CubeCL's LLVM/NVPTX
//! path, the code generator the `cuda` runtime takes. What the GPU runs is what `ptxas` (or the
//! driver, at the first launch) makes of that PTX, so its registers, spills and instruction mix
//! can be read without a device: the `kernel_report` bench does that (see CONTRIBUTING.md).
//!
//! ```no_run
//! # fn main() -> Result<(), burn_sad::kernel_report::KernelReportError> {
//! for kernel in burn_sad::kernel_report::cuda_kernels(90)? {
//!     println!("{}: {} bytes of PTX", kernel.name, kernel.ptx.len());
//! }
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use cubecl::Compiler;
use cubecl::cuda::compiler::CudaBackend;
use cubecl::cuda::{CudaCompilationOptions, CudaCompiler, CudaRepresentation};
use cubecl::ir::features::{AtomicUsage, Plane};
use cubecl::ir::nvidia::SmArch;
use cubecl::ir::{AddressType, DeviceProperties, ElemType, FloatKind, Type};
use cubecl::prelude::*;

/// A kernel's constructor for a cube of `dim` on the offline `device`: `kernel!(device, dim,
/// Kernel, args...)`, the kernel's compilation arguments, comptime values and element types in
/// its order after the settings and properties every constructor takes first.
macro_rules! kernel {
    ($device:expr, $dim:expr, $kernel:ty, $($arg:expr),* $(,)?) => {
        <$kernel>::new($device.settings($dim), $device.properties(), $device.target(), $($arg),*)
    };
}

mod sad;
mod ssim;

/// One CUDA kernel variant, compiled to PTX.
#[derive(Clone, Debug)]
pub struct CudaKernel {
    /// What the report calls it: the kernel, then the variant (`ssim_forward.train`).
    pub name: String,
    /// The PTX entry point.
    pub entry: String,
    /// The PTX module.
    pub ptx: String,
    /// The cube the launches use: units in x, y and z.
    pub cube_dim: [u32; 3],
    /// Dynamic shared memory a launch reserves, in bytes.
    pub shared_bytes: usize,
    /// What one cube computes.
    pub work: Work,
    /// CubeCL's expansion of the kernel and LLVM's lowering to PTX on this host: the part of a
    /// first run's warm-up spent before the driver sees the PTX.
    pub compile_time: Duration,
}

/// What one cube of a kernel computes, for counting instructions per output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Work {
    /// The outputs one cube produces (pixels, voxels, cells, sites).
    pub outputs: usize,
    /// What an output is.
    pub unit: &'static str,
    /// How often its units run the kernel's loops.
    pub loops: LoopTrips,
}

/// How often every unit of a kernel runs its loops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoopTrips {
    /// These trip counts, outermost loop first. A loop of one trip is no loop in the SASS, and
    /// the compiler may unroll inner loops of a few trips: the SASS then holds fewer nested
    /// loops than listed, the outermost ones.
    Fixed(Vec<usize>),
    /// As often as the data asks (a pixel's candidates, the distinct sites of a plane): each
    /// loop counts once, so a count per output is a lower bound.
    DataDependent,
}

/// Why a kernel could not be compiled for the report.
#[derive(Debug, thiserror::Error)]
pub enum KernelReportError {
    /// CubeCL's expansion or the NVPTX back end failed.
    #[error("compiling {kernel} for CUDA failed: {reason}")]
    Compile {
        /// The report's name for the kernel.
        kernel: String,
        /// What the compiler said.
        reason: String,
    },
    /// The compute capability is not one CubeCL's NVPTX path targets.
    #[error("sm_{0} is not a compute capability the report compiles for (70 or newer)")]
    Arch(u32),
}

/// Every CUDA kernel variant the report covers, compiled for compute capability `arch` (`90`
/// for an H100 or H200): the SSIM kernels in training and inference, L1 + SSIM, MS-SSIM's
/// contrast-structure term, a window mask, half-precision and 8-bit inputs, the 3D stages, and
/// SAD's render, backward, statistics and candidate kernels.
///
/// # Errors
/// [`KernelReportError`] where a kernel does not compile or `arch` is below 70.
pub fn cuda_kernels(arch: u32) -> Result<Vec<CudaKernel>, KernelReportError> {
    if arch < 70 {
        return Err(KernelReportError::Arch(arch));
    }
    let device = OfflineCuda::new(arch);
    let mut kernels = ssim::kernels(&device)?;
    kernels.extend(sad::kernels(&device)?);
    Ok(kernels)
}

/// A CUDA device that is not at hand: the properties the runtime would register for it (those
/// the variants are chosen by) and the compiler options it would compile with.
pub(crate) struct OfflineCuda {
    pub properties: Arc<DeviceProperties>,
    target: Arc<TargetProperties>,
    options: CudaCompilationOptions,
}

impl OfflineCuda {
    fn new(arch: u32) -> Self {
        let mut properties = burn_sad_kernels::offline::offline_properties((32, 32), 4);
        // What the CUDA runtime registers for every device of compute capability 7.0 or newer
        // that the kernels' variants read: planes of 32 with their operations anywhere, f32
        // atomic adds, and the opt-in shared memory of a Hopper multiprocessor.
        let plane = &mut properties.features.plane;
        plane.insert(Plane::Ops);
        plane.insert(Plane::Sync);
        plane.insert(Plane::NonUniformControlFlow);
        properties.register_atomic_type_usage(
            Type::atomic(ElemType::Float(FloatKind::F32)),
            AtomicUsage::Add | AtomicUsage::LoadStore | AtomicUsage::Exchange,
        );
        let hardware = &mut properties.hardware;
        hardware.max_shared_memory_size = 227 * 1024;
        hardware.max_units_per_cube = 1024;
        hardware.max_cube_dim = (1024, 1024, 64);
        hardware.num_streaming_multiprocessors = Some(132);
        let mut options = CudaCompilationOptions {
            arch: Some(SmArch::new(arch, true)),
            ..Default::default()
        };
        options.cpp.warp_size = 32;
        options.cpp.supports_features.grid_constants = true;
        options.cpp.supports_features.fast_math = true;
        Self {
            properties: Arc::new(properties),
            target: Arc::new(TargetProperties::default()),
            options,
        }
    }

    /// The launch settings of a cube of `dim`: unchecked, as the library launches its kernels.
    pub fn settings(&self, dim: CubeDim) -> KernelSettings {
        KernelSettings::new(*dim, ExecutionMode::Unchecked, AddressType::U32)
    }

    /// What every kernel's constructor takes after its settings.
    pub fn properties(&self) -> Arc<DeviceProperties> {
        self.properties.clone()
    }

    /// See [`properties`](Self::properties).
    pub fn target(&self) -> Arc<TargetProperties> {
        self.target.clone()
    }

    /// `kernel` (constructed with [`settings`](Self::settings) of `dim`) compiled to PTX.
    pub fn compile(
        &self,
        name: String,
        dim: CubeDim,
        work: Work,
        kernel: impl CubeKernel,
    ) -> Result<CudaKernel, KernelReportError> {
        let start = Instant::now();
        let failed = |reason: String| KernelReportError::Compile {
            kernel: name.clone(),
            reason,
        };
        let definition = kernel.define();
        let compiled = CudaCompiler::new(CudaBackend::Llvm)
            .compile(definition, &self.options)
            .map_err(|error| failed(format!("{error:?}")))?;
        let compile_time = start.elapsed();
        let CudaRepresentation::Llvm(module) = compiled else {
            return Err(failed("the LLVM back end returned no PTX".to_string()));
        };
        let bytes: Vec<u8> = module
            .ptx
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        let ptx = String::from_utf8(bytes).map_err(|error| failed(error.to_string()))?;
        Ok(CudaKernel {
            name: name.clone(),
            entry: module.entrypoint.clone(),
            ptx,
            cube_dim: [dim.x, dim.y, dim.z],
            shared_bytes: module.shared_memory_size,
            work,
            compile_time,
        })
    }
}

pub(crate) use burn_sad_kernels::offline::{F32, tensor_compilation_arg as tensor};
