//! The image kernels for the viewer: the render, the winners, the colour views, the site marks
//! and the canvas's RGBA pixels.

use burn_sad_kernels::sad::{
    TILE, ViewColours, mark_sites_kernel, render_kernel, rgba_kernel, view_colour_kernel,
    winner_kernel,
};

use super::ViewerError;
use super::kernels::{Common, ExportedKernel, F32, LINE_CUBE, VECTOR, compile, scalar, t, tensor};

/// The image kernels, as `sad render` launches them.
pub(super) fn image_kernels(c: &Common) -> Result<Vec<ExportedKernel>, ViewerError> {
    let tile_2d = [TILE as u32, TILE as u32, 1];
    let line = [LINE_CUBE, 1, 1];
    let mut kernels = Vec::new();
    let per_pixel = |output: &'static str, element: &'static str| {
        vec![
            tensor("records", "u32", VECTOR),
            tensor("candidates", "i32", VECTOR),
            tensor(output, element, 1),
            scalar("width", "usize"),
            scalar("height", "usize"),
            scalar("cand_w", "usize"),
            scalar("cand_h", "usize"),
            scalar("site_count", "usize"),
            scalar("inv_scale_sq", "f32"),
        ]
    };
    let kernel = render_kernel::RenderKernel::new(
        c.settings(tile_2d),
        c.properties.clone(),
        c.target.clone(),
        t(),
        t(),
        t(),
        (),
        (),
        (),
        (),
        (),
        (),
        VECTOR,
        F32,
    );
    kernels.push(compile(
        "render",
        tile_2d,
        per_pixel("image", "f32"),
        kernel,
    )?);
    let kernel = winner_kernel::WinnerKernel::new(
        c.settings(tile_2d),
        c.properties.clone(),
        c.target.clone(),
        t(),
        t(),
        t(),
        (),
        (),
        (),
        (),
        (),
        (),
        VECTOR,
        F32,
    );
    kernels.push(compile(
        "winners",
        tile_2d,
        per_pixel("winners", "i32"),
        kernel,
    )?);
    for (name, colours) in [
        ("colours_cells", ViewColours::Cells),
        ("colours_tau", ViewColours::Tau),
        ("colours_anisotropy", ViewColours::Anisotropy),
    ] {
        let args = vec![
            tensor("sites", "f32", 1),
            tensor("winners", "i32", 1),
            tensor("image", "f32", 1),
            scalar("width", "usize"),
            scalar("height", "usize"),
            scalar("lo", "f32"),
            scalar("hi", "f32"),
        ];
        let kernel = view_colour_kernel::ViewColourKernel::new(
            c.settings(tile_2d),
            c.properties.clone(),
            c.target.clone(),
            t(),
            t(),
            t(),
            (),
            (),
            (),
            (),
            colours,
            F32,
        );
        kernels.push(compile(name, tile_2d, args, kernel)?);
    }
    for (name, centre) in [("mark_rings", false), ("mark_centres", true)] {
        let args = vec![
            tensor("records", "u32", 1),
            tensor("image", "f32", 1),
            scalar("width", "usize"),
            scalar("height", "usize"),
            scalar("site_count", "usize"),
        ];
        let kernel = mark_sites_kernel::MarkSitesKernel::new(
            c.settings(line),
            c.properties.clone(),
            c.target.clone(),
            t(),
            t(),
            (),
            (),
            (),
            centre,
            F32,
        );
        kernels.push(compile(name, line, args, kernel)?);
    }
    let args = vec![
        tensor("image", "f32", 1),
        tensor("rgba", "u32", 1),
        scalar("pixels", "usize"),
    ];
    let kernel = rgba_kernel::RgbaKernel::new(
        c.settings(line),
        c.properties.clone(),
        c.target.clone(),
        t(),
        t(),
        (),
        F32,
    );
    kernels.push(compile("rgba", line, args, kernel)?);
    Ok(kernels)
}
