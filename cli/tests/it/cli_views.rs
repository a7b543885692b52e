//! `sad fit --mask` and `sad render --view/--zoom/--centre` as a user runs them (the ops behind
//! them are tested against their references in the library's tests: `sad_mask`, `sad_views`,
//! `sad_zoom`).

use crate::cli_support;

use cli_support::{DATA, assert_one_error, runs_kernels, sad, scratch};

#[test]
fn sad_fit_takes_a_mask_image_or_the_alpha_channel() {
    let dir = scratch("mask");
    let photo = image::open(format!("{DATA}/sad/astro64.png"))
        .unwrap()
        .to_rgb8();
    // The right half kept, as a mask image and as the photo's own alpha. (Scaling a mask to its
    // photo is `resize`'s, compared with stb_image_resize in the README.)
    let mask =
        image::GrayImage::from_fn(64, 64, |x, _| image::Luma([if x < 32 { 0 } else { 255 }]));
    mask.save(dir.join("mask.png")).unwrap();
    let rgba = image::RgbaImage::from_fn(64, 64, |x, y| {
        let [r, g, b] = photo.get_pixel(x, y).0;
        image::Rgba([r, g, b, if x < 32 { 0 } else { 255 }])
    });
    rgba.save(dir.join("alpha.png")).unwrap();
    photo.save(dir.join("photo.png")).unwrap();
    let short = [
        "--iters",
        "30",
        "--sites",
        "200",
        "--max-sites",
        "200",
        "--target-bpp",
        "8",
        "--prune-start",
        "10",
        "--prune-freq",
        "5",
        "--prune-end",
        "25",
        "--log-freq",
        "30",
    ];
    // Each run: its PSNR, and the Training line's mask.
    let fit = |args: &[&str]| -> (f64, String) {
        let mut all = vec!["fit"];
        all.extend(args);
        all.extend(short);
        let out = sad(&all);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        let last = stdout.lines().last().unwrap_or_default();
        let psnr = last.trim_start_matches("PSNR: ").trim_end_matches(" dB");
        let mask = stdout
            .split("mask=")
            .nth(1)
            .and_then(|rest| rest.lines().next());
        (
            psnr.parse().expect(last),
            mask.unwrap_or_default().to_owned(),
        )
    };
    let out = |name: &str| dir.join(name).display().to_string();
    let (photo, alpha, mask) = (out("photo.png"), out("alpha.png"), out("mask.png"));
    let by_image = fit(&[&photo, "--mask", &mask, "--out-dir", &out("image")]);
    let by_alpha = fit(&[&alpha, "--mask", "alpha", "--out-dir", &out("alpha")]);
    assert_eq!(by_image.1, "2048 of 4096 pixels");
    assert_eq!(by_alpha.1, "2048 of 4096 pixels");
    // Same pixels, same mask: the same fit, within the float atomics' run-to-run spread.
    assert!(
        (by_image.0 - by_alpha.0).abs() < 0.05,
        "{by_image:?} against {by_alpha:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sad_render_writes_a_view_and_says_what_its_colours_mean() {
    let dir = scratch("views");
    let out = dir.join("cells.png");
    let sites = format!("{DATA}/sad/astro128_sites.txt");
    let run = sad(&[
        "render",
        &sites,
        "-o",
        out.to_str().unwrap(),
        "--view",
        "anisotropy",
        "--width",
        "64",
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("View: anisotropy:"), "{stdout}");
    assert_eq!(image::image_dimensions(&out).unwrap(), (64, 64));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sad_render_zooms_and_refuses_bad_zooms_in_one_line() {
    let dir = scratch("zoom");
    let sites = format!("{DATA}/sad/cat160x96_sites.txt");
    let out = dir.join("zoomed.png");
    let out = out.to_str().unwrap();
    let zero = sad(&["render", &sites, "-o", out, "--zoom", "0"]);
    assert_one_error(&zero, "zoom must be a number above 0", "--zoom 0");
    let photo = format!("{DATA}/sad/cat160x96.png");
    let target = sad(&[
        "render", &sites, "-o", out, "--zoom", "2", "--target", &photo,
    ]);
    assert_one_error(
        &target,
        "--target compares the file's own view",
        "--zoom with --target",
    );
    let point = sad(&["render", &sites, "-o", out, "--centre", "12"]);
    assert!(!point.status.success());
    assert!(
        String::from_utf8_lossy(&point.stderr).contains("not a point X,Y"),
        "{}",
        String::from_utf8_lossy(&point.stderr)
    );
    if runs_kernels("sad_render_zooms_and_refuses_bad_zooms_in_one_line, its zoomed render") {
        let run = sad(&[
            "render", &sites, "-o", out, "--zoom", "4", "--centre", "100,40", "--width", "200",
            "--height", "120", "--view", "cells",
        ]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert_eq!(image::image_dimensions(out).unwrap(), (200, 120));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
