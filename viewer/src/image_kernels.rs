//! The image kernels for the viewer: the render, the winners, the colour views, the site marks
//! and the canvas's RGBA pixels.

use burn_sad_kernels::sad::{
    TILE, ViewColours, mark_sites_kernel::MarkSitesKernel, render_kernel::RenderKernel,
    rgba_kernel::RgbaKernel, view_colour_kernel::ViewColourKernel, winner_kernel::WinnerKernel,
};

use super::ViewerError;
use super::export::{Common, ExportedKernel, F32, LINE_CUBE, VECTOR, export};

/// The image kernels, as `sad render` launches them.
pub(super) fn image_kernels(c: &Common) -> Result<Vec<ExportedKernel>, ViewerError> {
    let tile_2d = [TILE as u32, TILE as u32, 1];
    let line = [LINE_CUBE, 1, 1];
    let mut kernels = Vec::new();
    kernels.push(export!(c, "render", tile_2d, RenderKernel;
        [records: T(u32, VECTOR), candidates: T(i32, VECTOR), image: T(f32, 1), grid: PixelGrid];
        VECTOR, F32)?);
    kernels.push(export!(c, "winners", tile_2d, WinnerKernel;
        [records: T(u32, VECTOR), candidates: T(i32, VECTOR), winners: T(i32, 1), grid: PixelGrid];
        VECTOR, F32)?);
    for (name, colours) in [
        ("colours_cells", ViewColours::Cells),
        ("colours_tau", ViewColours::Tau),
        ("colours_anisotropy", ViewColours::Anisotropy),
    ] {
        kernels.push(export!(c, name, tile_2d, ViewColourKernel;
            [sites: T(f32, 1), winners: T(i32, 1), image: T(f32, 1), view: ColourView];
            colours, F32)?);
    }
    for (name, centre) in [("mark_rings", false), ("mark_centres", true)] {
        kernels.push(export!(c, name, line, MarkSitesKernel;
            [records: T(u32, 1), image: T(f32, 1), width: usize, height: usize,
             site_count: usize];
            centre, F32)?);
    }
    kernels.push(export!(c, "rgba", line, RgbaKernel;
        [image: T(f32, 1), rgba: T(u32, 1), pixels: usize];
        F32)?);
    Ok(kernels)
}
