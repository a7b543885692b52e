//! The `sad` command line, run as a user would.

use std::process::{Command, Output};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn sad(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sad"))
        .args(args)
        .output()
        .expect("sad runs")
}

fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string()
}

fn expected(name: &str) -> (f64, f64) {
    let line = include_str!("data/expected.txt")
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
fn ms_ssim_and_window_options() {
    let row = include_str!("data/expected_ms_ssim.txt")
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
        "192",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = image::open(&wide).unwrap();
    assert_eq!((written.width(), written.height()), (192, 192));
    let refused = dir.join("refused.png");
    let out = sad(&[
        "render",
        &sites,
        "-o",
        refused.to_str().unwrap(),
        "--width",
        "192",
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
