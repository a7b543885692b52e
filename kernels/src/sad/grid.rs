//! The pixel grid the per-pixel kernels cover: the image, the candidate grid its pixels read,
//! and the sites' count and distance scale.

use cubecl::prelude::*;

/// What the per-pixel kernels of a render take (the render, the winners, the backward and the
/// statistics), one launch argument for all of them: the image and candidate grid sizes, the
/// sites' count and the squared distance scale. The library's launches and the viewer's export
/// build it from here, so that an argument added is added once.
#[derive(CubeLaunch, CubeType, Clone, Copy, Debug, PartialEq)]
pub struct PixelGrid {
    /// Image width in pixels.
    pub width: usize,
    /// Image height in pixels.
    pub height: usize,
    /// Candidate grid width in cells.
    pub cand_w: usize,
    /// Candidate grid height in cells.
    pub cand_h: usize,
    /// Sites in the records (their capacity; inactive ones included).
    pub site_count: usize,
    /// 1 / max(width, height)², the scale of squared distances.
    pub inv_scale_sq: f32,
}

impl PixelGrid {
    /// The fields in order, with the scalar type a host binds each as: how the viewer's export
    /// lists this argument.
    pub const FIELDS: [(&'static str, &'static str); 6] = [
        ("width", "usize"),
        ("height", "usize"),
        ("cand_w", "usize"),
        ("cand_h", "usize"),
        ("site_count", "usize"),
        ("inv_scale_sq", "f32"),
    ];

    /// The argument of a launch.
    pub fn launch_arg(&self) -> PixelGridLaunch {
        PixelGridLaunch::new(
            self.width,
            self.height,
            self.cand_w,
            self.cand_h,
            self.site_count,
            self.inv_scale_sq,
        )
    }

    /// The argument of a kernel's compilation (its scalars compile to no value).
    pub fn compilation_arg() -> PixelGridCompilationArg {
        PixelGridCompilationArg {
            width: (),
            height: (),
            cand_w: (),
            cand_h: (),
            site_count: (),
            inv_scale_sq: (),
        }
    }
}
