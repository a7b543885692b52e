//! The packed sites format through the command line: `sad convert`, `sad render` of a packed
//! file and `--packed`, and bad packed files (`sad fit --format packed`: `cli::fit_writes_..`).

use crate::cli_support;

use cli_support::{DATA, assert_one_error, last_line, sad, scratch};

/// The PSNR a successful render printed last.
fn psnr_of(out: &std::process::Output) -> f64 {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    last_line(&out.stdout)
        .strip_prefix("PSNR: ")
        .and_then(|rest| rest.strip_suffix(" dB"))
        .and_then(|value| value.parse().ok())
        .expect("last line `PSNR: <value> dB`")
}

fn render(sites: &std::path::Path, png: &std::path::Path, extra: &[&str]) -> f64 {
    let target = format!("{DATA}/sad/cat160x96.png");
    let mut args = vec![
        "render",
        sites.to_str().unwrap(),
        "-o",
        png.to_str().unwrap(),
        "--target",
        &target,
    ];
    args.extend_from_slice(extra);
    psnr_of(&sad(&args))
}

#[test]
fn a_packed_file_renders_as_packed_text_does_and_converts_back_exactly() {
    let dir = scratch("packed");
    let text = std::path::PathBuf::from(format!("{DATA}/sad/cat160x96_sites.txt"));
    let packed = dir.join("cat_sites.sadp");
    let out = sad(&["convert", text.to_str().unwrap(), packed.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 16 bytes a site after the 80-byte header.
    let bytes = std::fs::read(&packed).unwrap();
    assert_eq!(bytes.len(), 80 + 16 * 1500);
    assert!(
        last_line(&out.stdout).contains("24080 bytes"),
        "{}",
        last_line(&out.stdout)
    );

    let full = render(&text, &dir.join("full.png"), &[]);
    let through = render(&text, &dir.join("through.png"), &["--packed"]);
    let from_file = render(&packed, &dir.join("file.png"), &[]);
    // A packed file is rendered as it is, `--packed` or not.
    let again = render(&packed, &dir.join("again.png"), &["--packed"]);
    let png = |name: &str| std::fs::read(dir.join(name)).unwrap();
    assert_eq!(png("through.png"), png("file.png"), "--packed of the text");
    assert_eq!(png("again.png"), png("file.png"));
    assert_eq!((through, again), (from_file, from_file));
    // The quantisation's cost on this fixture (42.09 dB): a few thousandths of a dB.
    assert!(
        (full - from_file).abs() < 0.05,
        "text {full} dB, packed {from_file} dB"
    );

    // Back to text: the text holds the packed values exactly, so the render is the same.
    let back = dir.join("back_sites.txt");
    let out = sad(&["convert", packed.to_str().unwrap(), back.to_str().unwrap()]);
    assert!(out.status.success());
    render(&back, &dir.join("back.png"), &[]);
    assert_eq!(png("back.png"), png("file.png"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_packed_files_and_conversions_fail_in_one_line() {
    let dir = scratch("packed-bad");
    let good = std::fs::read(format!("{DATA}/sad/cat160x96_sites.sadp")).unwrap();
    let png = dir.join("out.png");
    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "short",
            good[..30].to_vec(),
            "shorter than the 80-byte header",
        ),
        (
            "truncated",
            good[..good.len() - 16].to_vec(),
            "is it truncated?",
        ),
        (
            "nan range",
            [&good[..20], &f32::NAN.to_le_bytes(), &good[24..]].concat(),
            "log_tau range",
        ),
        (
            "version",
            [&good[..4], &7u32.to_le_bytes(), &good[8..]].concat(),
            "format version 7",
        ),
    ];
    for (case, bytes, needle) in cases {
        let file = dir.join("bad_sites.sadp");
        std::fs::write(&file, bytes).unwrap();
        let out = sad(&[
            "render",
            file.to_str().unwrap(),
            "-o",
            png.to_str().unwrap(),
        ]);
        assert_one_error(&out, needle, case);
        assert!(!png.exists(), "{case}: no output on error");
        let out = sad(&[
            "convert",
            file.to_str().unwrap(),
            dir.join("x.txt").to_str().unwrap(),
        ]);
        assert_one_error(&out, needle, case);
    }
    let text = format!("{DATA}/sad/cat160x96_sites.txt");
    let out = sad(&["convert", &text, png.to_str().unwrap()]);
    assert_one_error(
        &out,
        "name the output *.sadp (packed) or *.txt (text)",
        "extension",
    );
    let sizeless = dir.join("sizeless_sites.txt");
    std::fs::write(&sizeless, "1 2 0.5 0.5 0.5 5 3 1 0 0\n").unwrap();
    let out = sad(&[
        "convert",
        sizeless.to_str().unwrap(),
        dir.join("s.sadp").to_str().unwrap(),
    ]);
    assert_one_error(&out, "packing needs the image size", "no size");
    assert!(!dir.join("s.sadp").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
