//! The `sad` command line, run as a user would.

use crate::cli_support;

use std::process::Command;

use cli_support::{DATA, last_line, sad};

fn expected(name: &str) -> (f64, f64) {
    let line = include_str!("../../../tests/data/expected.txt")
        .lines()
        .find(|line| line.starts_with(name))
        .expect("fixture row");
    let f: Vec<&str> = line.split_whitespace().collect();
    // The columns computed with fused-ssim's taps, which the CLI uses.
    (f[3].parse().unwrap(), f[4].parse().unwrap())
}

#[test]
fn ssim_prints_the_value_as_its_last_line() {
    let (same, valid) = expected("chelsea");
    let a = format!("{DATA}/chelsea.png");
    let b = format!("{DATA}/chelsea_degraded.png");
    for (padding, want) in [("same", same), ("valid", valid)] {
        let out = sad(&["ssim", &a, &b, "--padding", padding]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: f64 = last_line(&out.stdout).parse().expect("a number");
        assert!((got - want).abs() < 2e-6, "{padding}: {got} vs {want}");
    }
}

#[test]
fn the_data_range_sets_the_constants_as_pytorch_msssim() {
    // pytorch-msssim's `ssim(x, y, data_range=1)` on 8-bit values (make_pytorch_msssim.py).
    let row = include_str!("../../../tests/data/expected_pytorch_msssim.txt")
        .lines()
        .find(|line| line.starts_with("ssim chelsea 255r1"))
        .expect("fixture row");
    let want: f64 = row.split_whitespace().nth(3).unwrap().parse().unwrap();
    let a = format!("{DATA}/chelsea.png");
    let b = format!("{DATA}/chelsea_degraded.png");
    let out = sad(&["ssim", &a, &b, "--padding", "valid", "--data-range", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: f64 = last_line(&out.stdout).parse().expect("a number");
    assert!((got - want).abs() < 2e-4, "data range 1: {got} vs {want}");
    let (_, valid) = expected("chelsea");
    let usual = sad(&["ssim", &a, &b, "--padding", "valid", "--data-range", "255"]);
    let usual: f64 = last_line(&usual.stdout).parse().expect("a number");
    assert!(
        (usual - valid).abs() < 2e-6,
        "data range 255: {usual} vs {valid}"
    );
    let out = sad(&["ssim", &a, &b, "--data-range", "0"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--data-range must be a positive number"),
        "{stderr}"
    );
}

#[test]
fn ms_ssim_and_window_options() {
    let row = include_str!("../../../tests/data/expected_ms_ssim.txt")
        .lines()
        .find(|line| line.starts_with("astronaut_ms"))
        .expect("fixture row");
    let want: f64 = row.split_whitespace().nth(2).unwrap().parse().unwrap();
    let a = format!("{DATA}/astronaut_ms.png");
    let b = format!("{DATA}/astronaut_ms_degraded.png");
    let out = sad(&["ssim", &a, &b, "--ms"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: f64 = last_line(&out.stdout).parse().expect("a number");
    assert!((got - want).abs() < 1e-5, "MS-SSIM {got} vs {want}");
    let narrow = sad(&["ssim", &a, &b, "--window", "7", "--sigma", "1.0"]);
    assert!(narrow.status.success());
    let narrow: f64 = last_line(&narrow.stdout).parse().unwrap();
    let default = sad(&["ssim", &a, &b]);
    let default: f64 = last_line(&default.stdout).parse().unwrap();
    assert!((narrow - default).abs() > 1e-4, "the window must matter");
    let small = format!("{DATA}/coffee.png");
    let out = sad(&["ssim", &small, &small, "--ms"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("larger than 160"));
    let out = sad(&["ssim", &a, &b, "--window", "8"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("window must be odd"));
}

#[test]
fn ssim_errors_are_one_line() {
    let dir = std::env::temp_dir().join(format!("burn-sad-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let garbage = dir.join("garbage.png");
    std::fs::write(&garbage, b"not a png at all").unwrap();
    let garbage = garbage.to_str().unwrap();
    let astronaut = format!("{DATA}/astronaut.png");
    let coffee = format!("{DATA}/coffee.png");
    let cases: [(&[&str], &str); 5] = [
        (&["ssim", &astronaut, &coffee], "same size"),
        (&["ssim", &astronaut, garbage], "garbage.png"),
        (&["ssim", &astronaut, "/no/such/file.png"], "file.png"),
        (
            &["ssim", &astronaut, &astronaut, "--padding", "reflect"],
            "reflect",
        ),
        (
            &["--device", "quantum", "ssim", &astronaut, &astronaut],
            "quantum",
        ),
    ];
    for (args, mention) in cases {
        let out = sad(args);
        assert!(!out.status.success(), "{args:?} should fail");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(mention), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?} printed a result");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn render_writes_the_png_and_prints_psnr_last() {
    let dir = std::env::temp_dir().join(format!("sad-cli-render-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out_png = dir.join("astro128.png");
    let sites = format!("{DATA}/sad/astro128_sites.txt");
    let target = format!("{DATA}/sad/astro128.png");
    let out = sad(&[
        "render",
        &sites,
        "-o",
        out_png.to_str().unwrap(),
        "--target",
        &target,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = last_line(&out.stdout);
    let value: f64 = last
        .strip_prefix("PSNR: ")
        .and_then(|v| v.strip_suffix(" dB"))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("last line `{last}`"));
    // The reference's own render of this file: 34.09 dB.
    assert!((value - 34.09).abs() <= 0.055, "{value}");
    let written = image::open(&out_png).unwrap();
    assert_eq!((written.width(), written.height()), (128, 128));

    // At another size: the PNG follows, and a target of the old size is refused up front.
    let wide = dir.join("wide.png");
    let out = sad(&[
        "render",
        &sites,
        "-o",
        wide.to_str().unwrap(),
        "--width",
        "96",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = image::open(&wide).unwrap();
    assert_eq!((written.width(), written.height()), (96, 96));
    let refused = dir.join("refused.png");
    let out = sad(&[
        "render",
        &sites,
        "-o",
        refused.to_str().unwrap(),
        "--width",
        "96",
        "--target",
        &target,
    ]);
    assert!(!out.status.success());
    assert!(last_line(&out.stderr).contains("same size"));
    assert!(!refused.exists(), "no output on error");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn render_rejects_bad_files_in_one_line() {
    let dir = std::env::temp_dir().join(format!("sad-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad_sites.txt");
    std::fs::write(&bad, "# Image size: 8 8\n1 2 0.5 0.5 0.5 5 3 1 0\n").unwrap();
    let out_png = dir.join("out.png");
    let out = sad(&[
        "render",
        bad.to_str().unwrap(),
        "-o",
        out_png.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("line 2") && errors[0].contains("found 9"),
        "{stderr}"
    );
    assert!(!out_png.exists());
    let out = sad(&[
        "render",
        "/nonexistent/x_sites.txt",
        "-o",
        out_png.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(last_line(&out.stderr).starts_with("error: /nonexistent/x_sites.txt"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fit_writes_the_image_and_sites_and_prints_psnr_last() {
    let dir = std::env::temp_dir().join(format!("sad-cli-fit-{}", std::process::id()));
    let image = format!("{DATA}/sad/astro64.png");
    let out = sad(&[
        "fit",
        &image,
        "--iters",
        "40",
        "--sites",
        "200",
        "--max-sites",
        "200",
        "--prune-start",
        "10",
        "--prune-freq",
        "10",
        "--prune-end",
        "35",
        "--target-bpp",
        "4",
        "--log-freq",
        "10",
        "--out-dir",
        dir.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let psnr: f64 = last_line(&out.stdout)
        .strip_prefix("PSNR: ")
        .and_then(|rest| rest.strip_suffix(" dB"))
        .expect("last line `PSNR: <value> dB`")
        .parse()
        .unwrap();
    assert!(psnr > 15.0 && psnr < 60.0, "{stdout}");
    // A log line per measurement, numbered as the reference's: every 10th and the last.
    let logged: Vec<usize> = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("Iter "))
        .map(|rest| rest.split(" | ").next().unwrap().trim().parse().unwrap())
        .collect();
    assert_eq!(logged, [0, 10, 20, 30, 39], "{stdout}");
    let last_logged = stdout.lines().rfind(|l| l.starts_with("Iter ")).unwrap();
    let logged_psnr: f64 = last_logged.split(" | PSNR: ").nth(1).unwrap()[..5]
        .parse()
        .unwrap();
    assert!((logged_psnr - psnr).abs() < 0.01, "{stdout}");
    assert!(last_logged.contains("| Active: 128 |"), "{stdout}");
    // 64×64 at 4 bpp: 128 sites, which the summary and the file agree on.
    assert!(stdout.contains("Sites: 128 | bpp: 4.0000"), "{stdout}");
    let text_bytes = std::fs::metadata(dir.join("astro64_sites.txt"))
        .unwrap()
        .len();
    assert!(
        stdout.contains(&format!("Sites file: {text_bytes} bytes, ")),
        "{stdout}"
    );
    assert!(stdout.contains("SSIM: 0."), "{stdout}");
    assert!(stdout.contains("Training time: "), "{stdout}");
    let table = burn_sad::sad::read_sites(dir.join("astro64_sites.txt")).expect("sites file");
    assert_eq!(
        (table.width, table.height, table.sites.len()),
        (64, 64, 128)
    );
    let png = image::open(dir.join("astro64.png")).expect("png").to_rgb8();
    assert_eq!(png.dimensions(), (64, 64));
    // Rendering the written sites gives back the trained image's quality.
    let render = sad(&[
        "render",
        dir.join("astro64_sites.txt").to_str().unwrap(),
        "-o",
        dir.join("again.png").to_str().unwrap(),
        "--target",
        &image,
    ]);
    assert!(render.status.success());
    let again: f64 = last_line(&render.stdout)
        .strip_prefix("PSNR: ")
        .and_then(|rest| rest.strip_suffix(" dB"))
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (again - psnr).abs() < 1.0,
        "fit {psnr} dB, render {again} dB"
    );
    // The fit's line for the saved file is what `sad render` of it prints.
    let saved: f64 = stdout
        .lines()
        .find_map(|line| line.strip_prefix("Saved sites render at "))
        .and_then(|rest| rest.split(" dB").next())
        .expect("a `Saved sites render at <value> dB` line")
        .parse()
        .unwrap();
    assert!(
        (again - saved).abs() < 0.01,
        "the fit's saved-file line {saved} dB, sad render {again} dB"
    );
    // Every site is placed (no prune in 5 steps); this run writes the packed format.
    let rounds = sad(&[
        "fit",
        &image,
        "--iters",
        "5",
        "--sites",
        "200",
        "--target-bpp",
        "4",
        "--format",
        "packed",
        "--out-dir",
        dir.join("rounds").to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&rounds.stdout);
    assert!(rounds.status.success(), "{stdout}");
    assert!(stdout.contains("Sites: 200 | "), "{stdout}");
    // 200 sites of 16 bytes after the 80-byte header, on 64 × 64 pixels.
    let packed = dir.join("rounds/astro64_sites.sadp");
    let bytes = std::fs::read(&packed).expect("the packed sites file");
    assert_eq!(bytes.len(), 80 + 16 * 200);
    let line = format!(
        "Sites file: 3280 bytes, {:.4} bpp on disk",
        3280.0 * 8.0 / 4096.0
    );
    assert!(stdout.contains(&line), "{line} in {stdout}");
    let table = burn_sad::sad::read_sites(&packed).expect("reads back");
    assert_eq!((table.width, table.height, table.active()), (64, 64, 200));
    assert!(!dir.join("rounds/astro64_sites.txt").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fit_rejects_bad_input_in_one_line() {
    let dir = std::env::temp_dir().join(format!("sad-cli-fit-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let garbage = dir.join("garbage.png");
    std::fs::write(&garbage, b"not a png").unwrap();
    let config = dir.join("config.json");
    std::fs::write(&config, r#"{"PRUNE_PERCENTAGE": 0.1}"#).unwrap();
    let image = format!("{DATA}/sad/astro64.png");
    let out_dir = dir.join("out");
    let cases: [(Vec<&str>, &str); 7] = [
        (vec!["/nonexistent/photo.png"], "/nonexistent/photo.png"),
        (vec![garbage.to_str().unwrap()], "garbage.png"),
        (vec![&image, "--target-bpp", "0"], "--target-bpp"),
        (vec![&image, "--target-bpp", "-1"], "--target-bpp"),
        (vec![&image, "--max-dim", "0"], "--max-dim"),
        (vec![&image, "--format", "random"], "--format"),
        (
            vec![&image, "--config", config.to_str().unwrap()],
            "PRUNE_PERCENTAGE",
        ),
    ];
    for (args, needle) in cases {
        let mut full = vec!["fit"];
        full.extend(args.iter().copied());
        full.extend(["--iters", "5", "--out-dir", out_dir.to_str().unwrap()]);
        let out = sad(&full);
        assert!(!out.status.success(), "{args:?} succeeded");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {stderr}");
        assert!(errors[0].contains(needle), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            !out_dir.join("astro64.png").exists(),
            "{args:?} wrote an output"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_run_without_xdg_runtime_dir_prints_no_false_errors() {
    let a = format!("{DATA}/chelsea.png");
    let b = format!("{DATA}/chelsea_degraded.png");
    let out = Command::new(env!("CARGO_BIN_EXE_sad"))
        .args(["ssim", &a, &b])
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .expect("sad runs");
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("XDG_RUNTIME_DIR"), "stderr: {stderr}");
    assert!(!stderr.contains("error"), "stderr: {stderr}");
    // The device as a person reads it, not a debug dump.
    let device = stderr
        .lines()
        .find_map(|line| line.strip_prefix("device: "))
        .expect("a device line");
    assert!(
        !device.contains('{') && !device.contains("("),
        "device line: {device}"
    );
}
