//! What each family of this crate's kernels needs from a device, read from the device's
//! properties (`client.properties()`), so that a device without it is refused before work
//! starts instead of failing inside a launch.

/// A group of kernels with the same needs from a device.
///
/// ```
/// use burn_sad::device::{KernelFamily, family_support};
///
/// let device = burn::tensor::Device::default();
/// for family in KernelFamily::ALL {
///     match family_support(&device, family) {
///         Ok(()) => println!("{family}: runs here"),
///         Err(why) => println!("{family}: {why}"),
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelFamily {
    /// The SSIM family: 2D and 3D SSIM, its losses, maps and reductions, forward and backward.
    Ssim,
    /// SAD rendering without gradients: the candidate lists, the render, the views.
    SadRender,
    /// SAD training: the render's backward, the densify statistics, the optimizer step.
    SadTraining,
}

impl KernelFamily {
    /// Every family.
    pub const ALL: [KernelFamily; 3] = [Self::Ssim, Self::SadRender, Self::SadTraining];

    /// Whether [`missing`] reads anything of a device's properties for this family.
    #[cfg(feature = "cube")]
    pub(crate) fn reads_properties(self) -> bool {
        !matches!(self, Self::Ssim)
    }

    /// The family as a person reads it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Ssim => "SSIM",
            Self::SadRender => "SAD rendering",
            Self::SadTraining => "SAD training",
        }
    }
}

impl std::fmt::Display for KernelFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Units a cube of the SAD kernels holds at most: a 16×16 tile of pixels, and 256 radix bins.
#[cfg(feature = "cube")]
const SAD_UNITS_PER_CUBE: u32 = {
    use burn_sad_kernels::sad::{RADIX_BINS, TILE};
    let tile = (TILE * TILE) as u32;
    if tile > RADIX_BINS as u32 {
        tile
    } else {
        RADIX_BINS as u32
    }
};

/// The first thing `family` needs that a device of `properties` lacks, as a person reads it.
#[cfg(feature = "cube")]
pub(crate) fn missing(
    properties: &cubecl::ir::DeviceProperties,
    family: KernelFamily,
) -> Option<String> {
    use cubecl::ir::features::AtomicUsage;
    use cubecl::ir::{ElemType, FloatKind, Type};
    let units = properties.hardware.max_units_per_cube;
    match family {
        KernelFamily::Ssim => None,
        KernelFamily::SadRender | KernelFamily::SadTraining if units < SAD_UNITS_PER_CUBE => Some(
            format!("room for {SAD_UNITS_PER_CUBE} units in a workgroup (it takes {units})"),
        ),
        KernelFamily::SadRender => None,
        // The backward and the statistics add each pixel's share into per-site f32 sums in
        // global memory (WGSL's `atomic<f32>`): wgpu's OpenGL backend has no such atomics.
        KernelFamily::SadTraining => (!properties
            .atomic_type_usage(Type::atomic(ElemType::Float(FloatKind::F32)))
            .contains(AtomicUsage::Add))
        .then(|| "atomic f32 addition in storage buffers".to_owned()),
    }
}
