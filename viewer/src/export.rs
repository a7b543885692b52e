//! How one kernel becomes what the page runs: CubeCL's WGSL compiler on a kernel `sad render`
//! launches, for a device it is not compiled on, with the argument list a WebGPU host binds by
//! (`export!`).

use std::sync::Arc;

use cubecl::ir::AddressType;
use cubecl::prelude::*;
use cubecl::wgpu::WgslCompiler;
use cubecl::{Compiler, WgpuCompilationOptions};
use serde::Serialize;

use super::ViewerError;
use super::wgsl_fixups::for_browsers;

/// Units of the per-site and per-pixel 1D kernels' cubes.
pub(super) const LINE_CUBE: u32 = 256;
/// Words per load of the site records and the candidate lists: 16-byte vectors.
pub(super) const VECTOR: usize = 4;

/// One argument of an exported kernel, in the order the kernel declares it.
#[derive(Clone, Debug, Serialize)]
pub struct KernelArg {
    /// The kernel's name for it.
    pub name: &'static str,
    /// `tensor`, or the scalar's type: `usize` (u32 in WGSL), `u32`, `i32` or `f32`.
    pub kind: &'static str,
    /// A tensor's element type (`f32`, `u32`, `i32`); empty for a scalar.
    pub element: &'static str,
    /// Elements per load of a tensor (its WGSL array holds `vecN`s where > 1); 0 for a scalar.
    pub vector: usize,
}

/// A kernel of the viewer: its WGSL and how to bind and launch it.
#[derive(Clone, Debug, Serialize)]
pub struct ExportedKernel {
    /// The page's name for it.
    pub name: &'static str,
    /// The workgroup size the WGSL declares (the launch's cube dimensions).
    pub workgroup: [u32; 3],
    /// The arguments: tensors take bindings 0, 1, … in this order, and binding `tensors` is
    /// the read-only `info` buffer of the scalars and the tensors' shapes (see the README's
    /// viewer section for its layout).
    pub args: Vec<KernelArg>,
    /// The WGSL module.
    pub wgsl: String,
}

pub(super) fn tensor(name: &'static str, element: &'static str, vector: usize) -> KernelArg {
    KernelArg {
        name,
        kind: "tensor",
        element,
        vector,
    }
}

pub(super) fn scalar(name: &'static str, kind: &'static str) -> KernelArg {
    KernelArg {
        name,
        kind,
        element: "",
        vector: 0,
    }
}

/// Properties of a device the WGSL is not compiled for: the kernels' expansion reads none of
/// them, and the WGSL compiler takes no device.
pub(super) fn offline_properties() -> Arc<DeviceProperties> {
    Arc::new(burn_sad_kernels::offline::offline_properties(
        (32, 32),
        VECTOR,
    ))
}

/// What every kernel's constructor takes first.
pub(super) struct Common {
    pub(super) properties: Arc<DeviceProperties>,
    pub(super) target: Arc<TargetProperties>,
}

impl Common {
    pub(super) fn settings(&self, workgroup: [u32; 3]) -> KernelSettings {
        let dim = CubeDim::new_3d(workgroup[0], workgroup[1], workgroup[2]);
        // Unchecked, as the library launches them: the browser bounds-checks every access.
        KernelSettings::new(*dim, ExecutionMode::Unchecked, AddressType::U32)
    }
}

pub(super) use burn_sad_kernels::offline::{F32, tensor_compilation_arg as t};

pub(super) fn compile(
    name: &'static str,
    workgroup: [u32; 3],
    args: Vec<KernelArg>,
    kernel: impl CubeKernel,
) -> Result<ExportedKernel, ViewerError> {
    let definition = kernel.define();
    let shader = WgslCompiler
        .compile(definition, &WgpuCompilationOptions::default())
        .map_err(|error| ViewerError::Compile {
            kernel: name,
            reason: format!("{error:?}"),
        })?;
    Ok(ExportedKernel {
        name,
        workgroup,
        args,
        wgsl: for_browsers(&shader.to_string()).map_err(|reason| ViewerError::Compile {
            kernel: name,
            reason,
        })?,
    })
}

/// One kernel of the viewer, its arguments stated once: `export!(common, NAME, WORKGROUP,
/// Kernel; [arg: T(element, vector), arg: usize|u32|i32|f32, ...]; comptime values...)` gives
/// the [`ExportedKernel`] (a `Result`), building both the page's argument list and the kernel's
/// constructor from that one list, in the kernel's argument order.
macro_rules! export {
    ($common:expr, $name:expr, $workgroup:expr, $kernel:ty;
        [$($arg:ident: $kind:ident $(($element:ident, $vector:expr))?),* $(,)?];
        $($comptime:expr),* $(,)?) => {{
        let workgroup: [u32; 3] = $workgroup;
        let args: Vec<$crate::export::KernelArg> =
            [$($crate::export::describe!($arg $kind $(($element, $vector))?)),*].concat();
        let kernel = <$kernel>::new(
            $common.settings(workgroup),
            $common.properties.clone(),
            $common.target.clone(),
            $($crate::export::compilation_arg!($kind)),*,
            $($comptime),*
        );
        $crate::export::compile($name, workgroup, args, kernel)
    }};
}

/// A launch struct's fields (name, scalar type) as the scalars they take the places of.
pub(super) fn fields(fields: &[(&'static str, &'static str)]) -> Vec<KernelArg> {
    fields
        .iter()
        .map(|&(name, kind)| scalar(name, kind))
        .collect()
}

/// The page's description of one argument of [`export!`]: a tensor, a scalar, or a launch
/// struct of `burn_sad_kernels::sad` (made by its `launch_struct!`), whose fields it lists in
/// order.
macro_rules! describe {
    ($arg:ident T($element:ident, $vector:expr)) => {
        vec![$crate::export::tensor(
            stringify!($arg),
            stringify!($element),
            $vector,
        )]
    };
    ($arg:ident usize) => {
        vec![$crate::export::scalar(stringify!($arg), "usize")]
    };
    ($arg:ident u32) => {
        vec![$crate::export::scalar(stringify!($arg), "u32")]
    };
    ($arg:ident i32) => {
        vec![$crate::export::scalar(stringify!($arg), "i32")]
    };
    ($arg:ident f32) => {
        vec![$crate::export::scalar(stringify!($arg), "f32")]
    };
    ($arg:ident $launch_struct:ident) => {
        $crate::export::fields(burn_sad_kernels::sad::$launch_struct::FIELDS)
    };
}

/// The constructor's compilation argument for one argument of [`export!`]: a tensor's, a
/// scalar's (none), or a launch struct's.
macro_rules! compilation_arg {
    (T) => {
        $crate::export::t()
    };
    (usize) => {
        ()
    };
    (u32) => {
        ()
    };
    (i32) => {
        ()
    };
    (f32) => {
        ()
    };
    ($launch_struct:ident) => {
        burn_sad_kernels::sad::$launch_struct::compilation_arg()
    };
}

pub(super) use {compilation_arg, describe, export};
