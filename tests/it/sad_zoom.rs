//! Zoomed views (`sad render --zoom/--centre`, the browser viewer's pan and zoom): the view of
//! a whole file at its own size is the identity and renders as the plain render, a zoomed-out
//! view is the plain render of the moved sites, a zoomed-in view is a crop of a larger render (the diagram is
//! magnified, not its pixels), and bad zooms are refused.

use crate::common;

use burn_sad::device::uses_fused_kernels;
use burn_sad::sad::{
    MAX_ZOOM, RenderOnlyOptions, SadError, SiteTable, ViewTransform, read_sites, render_sites,
};
use common::{DATA, device, values};

/// The cat crop's fit: 1 500 sites on 160×96.
fn cat() -> SiteTable {
    read_sites(format!("{DATA}/sad/cat160x96_sites.txt")).unwrap()
}

fn render(table: &SiteTable, options: RenderOnlyOptions) -> Vec<f32> {
    values(render_sites(table, &options, &device()).unwrap().image)
}

fn zoomed(size: (usize, usize), zoom: f32, centre: Option<(f32, f32)>) -> RenderOnlyOptions {
    RenderOnlyOptions {
        width: Some(size.0),
        height: Some(size.1),
        zoom: Some(zoom),
        centre,
        ..RenderOnlyOptions::default()
    }
}

/// PSNR in dB of two images with values in about [0, 1].
fn psnr(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    let mse = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(x - y).powi(2))
        .sum::<f64>()
        / a.len() as f64;
    if mse == 0.0 {
        f64::INFINITY
    } else {
        -10.0 * mse.log10()
    }
}

/// Whether this device runs the kernels that pack viewed records.
/// Whether zoomed views render here (they pack their records with a kernel; elsewhere they are
/// an error, see `views_need_kernels_without_them`), saying so where they do not.
fn views_run(test: &str) -> bool {
    common::runs_kernels(&device(), test)
}

#[test]
fn the_whole_file_at_its_own_size_is_the_identity_view() {
    let view = ViewTransform::zoomed((160, 96), (160, 96), 1.0, None).unwrap();
    assert!(view.is_identity(), "{view:?}");
    let table = cat();
    let plain = render(&table, RenderOnlyOptions::default());
    let viewed = render(&table, zoomed((160, 96), 1.0, None));
    // The same image, up to the rounding of the view's arithmetic on the device: the flood's
    // seeds are the same from run to run (the highest id of a shared cell wins).
    let db = psnr(&plain, &viewed);
    assert!(
        db > 60.0,
        "zoom 1 at the file's size: {db:.1} dB against the plain render"
    );
}

#[test]
fn a_zoomed_out_view_is_the_plain_render_of_the_moved_sites() {
    if !views_run("a_zoomed_out_view_is_the_plain_render_of_the_moved_sites") {
        return;
    }
    let table = cat();
    let view = ViewTransform::zoomed((160, 96), (160, 96), 0.5, None).unwrap();
    assert_eq!(
        (view.scale, view.offset_x, view.offset_y),
        (0.5, 40.0, 24.0)
    );
    assert!((view.log_tau_shift - 2f32.ln()).abs() < 1e-6);
    // The sites moved on the host: every position stays positive, so the plain render
    // (no view) of this table is what the view must show.
    let mut moved = table.clone();
    for site in &mut moved.sites {
        if site[0] >= 0.0 {
            (site[0], site[1]) = view.apply(site[0], site[1]);
            site[3] *= view.scale;
            site[2] += view.log_tau_shift;
        }
    }
    let want = render(&moved, RenderOnlyOptions::default());
    let got = render(&table, zoomed((160, 96), 0.5, None));
    let db = psnr(&got, &want);
    assert!(db > 60.0, "{db:.1} dB");
}

#[test]
fn a_zoomed_in_view_is_a_crop_of_a_larger_render() {
    if !views_run("a_zoomed_in_view_is_a_crop_of_a_larger_render") {
        return;
    }
    let table = cat();
    // Twice the size (radii scale too): the same diagram on twice the pixels.
    let large = render(
        &table,
        RenderOnlyOptions {
            width: Some(320),
            height: Some(192),
            ..RenderOnlyOptions::default()
        },
    );
    // Zoom 2 on the file's size, centred on (100, 40): the large render's pixels
    // (200 − 80 … 200 + 80) × (80 − 48 … 80 + 48).
    let got = render(&table, zoomed((160, 96), 2.0, Some((100.0, 40.0))));
    let (x0, y0) = (120, 32);
    let mut crop = Vec::with_capacity(got.len());
    for c in 0..3 {
        for y in 0..96 {
            let row = c * 320 * 192 + (y0 + y) * 320 + x0;
            crop.extend_from_slice(&large[row..row + 160]);
        }
    }
    let db = psnr(&got, &crop);
    assert!(db > 45.0, "{db:.1} dB against the crop");
    // And not merely close to any render: the view at zoom 1 is far from the crop.
    let unzoomed = render(&table, RenderOnlyOptions::default());
    assert!(psnr(&unzoomed, &crop) < 30.0);
}

#[test]
fn bad_zooms_and_centres_are_refused() {
    for zoom in [0.0, -1.0, f32::NAN, f32::INFINITY, MAX_ZOOM * 2.0] {
        let error = ViewTransform::zoomed((160, 96), (160, 96), zoom, None).unwrap_err();
        assert!(matches!(error, SadError::BadZoom { .. }), "{zoom}: {error}");
    }
    let error =
        ViewTransform::zoomed((160, 96), (160, 96), 2.0, Some((f32::NAN, 1.0))).unwrap_err();
    assert!(matches!(error, SadError::BadCentre { .. }), "{error}");
    let result = render_sites(&cat(), &zoomed((64, 64), 3.0, None), &device());
    if uses_fused_kernels(&device()) {
        assert_eq!(result.unwrap().image.dims(), [3, 64, 64]);
    } else {
        assert_eq!(result.unwrap_err(), SadError::ViewNeedsKernels);
    }
}
