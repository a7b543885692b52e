//! `sad` at the edges: sizes that would exhaust memory, inputs that used to hang or give a wrong
//! answer with exit code 0, and outputs that must be written as a unit (its messages and
//! `--help`: `cli_messages.rs`).

use crate::cli_support;

use std::path::Path;
use std::process::Command;

use cli_support::{DATA, assert_one_error, sad, scratch};

/// CRC-32 (IEEE) of `bytes`, as PNG chunks carry it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A PNG of a few dozen bytes whose header declares `width × height` RGB pixels (no pixel data):
/// decoding it for real would allocate gigabytes.
fn huge_png_header(path: &Path, width: u32, height: u32) {
    let mut ihdr = b"IHDR".to_vec();
    ihdr.extend(width.to_be_bytes());
    ihdr.extend(height.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(13u32.to_be_bytes());
    png.extend(&ihdr);
    png.extend(crc32(&ihdr).to_be_bytes());
    // An empty IDAT: decoders read the header up to the first data chunk.
    png.extend(0u32.to_be_bytes());
    png.extend(b"IDAT");
    png.extend(crc32(b"IDAT").to_be_bytes());
    png.extend(0u32.to_be_bytes());
    png.extend(b"IEND");
    png.extend(crc32(b"IEND").to_be_bytes());
    std::fs::write(path, png).unwrap();
}

#[test]
fn sizes_are_checked_before_memory_is_spent() {
    let dir = scratch("sizes");
    let huge = dir.join("huge.png");
    // sad fit scales photos over MAX_DIM down, but reads none with a side over 16 384.
    huge_png_header(&huge, 20_000, 20_000);
    let out_dir = dir.join("out");
    let huge = huge.to_str().unwrap();
    let fit = sad(&[
        "fit",
        huge,
        "--iters",
        "5",
        "--out-dir",
        out_dir.to_str().unwrap(),
    ]);
    assert_one_error(&fit, "16384 on a side", "fit of a 20000² header");
    assert!(!out_dir.join("huge.png").exists());

    // A 3 GiB file (sparse: it takes no disk) is refused before it is read into memory.
    let big = dir.join("big.png");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let big = big.to_str().unwrap();
    assert_one_error(&sad(&["ssim", big, big]), "3.0 GiB", "a 3 GiB file");

    let larger = dir.join("larger.png");
    huge_png_header(&larger, 20_000, 100);
    let larger = larger.to_str().unwrap();
    assert_one_error(
        &sad(&["ssim", larger, larger]),
        "16384",
        "ssim of a 20000-wide header",
    );

    let sites = format!("{DATA}/sad/astro128_sites.txt");
    let png = dir.join("o.png");
    let png = png.to_str().unwrap();
    let args = [
        "render", &sites, "-o", png, "--width", "65535", "--height", "65535",
    ];
    assert_one_error(&sad(&args), "16384", "render at 65535²");
    let args = [
        "render",
        &sites,
        "-o",
        png,
        "--width",
        "18446744073709551615",
    ];
    assert_one_error(
        &sad(&args),
        "16384",
        "render at a width that overflows the height",
    );
    assert!(!Path::new(png).exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unbounded_counts_are_bounded() {
    let dir = scratch("bounds");
    let sites = format!("{DATA}/sad/astro128_sites.txt");
    let png = dir.join("o.png");
    let args = [
        "render",
        &sites,
        "-o",
        png.to_str().unwrap(),
        "--passes",
        "4294967295",
    ];
    let out = sad(&args);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("0..=1024"));
    // The budget solver no longer replays 10⁸ iterations ~120 times before the first line.
    let image = format!("{DATA}/sad/astro64.png");
    let out_dir = dir.join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sad"))
        .args(["fit", &image, "--iters", "100000000", "--sites", "300"])
        .args(["--out-dir", out_dir.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(first.starts_with("Training |"), "{first}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn inputs_that_would_give_a_wrong_answer_are_errors() {
    let dir = scratch("wrong");
    let png = dir.join("o.png");
    let png = png.to_str().unwrap();
    let header = "# Image size: 16 16\n";
    for (name, body, needle) in [
        (
            "inactive",
            "-1 -1 0.5 0.5 0.5 5 3 1 0 0\n-1 -1 0.1 0.1 0.1 5 3 1 0 0\n",
            "inactive",
        ),
        ("aniso", "4 4 0.5 0.5 0.5 5 3 1 0 100\n", "log_anisotropy"),
        ("far", "4 3e38 0.5 0.5 0.5 5 3 1 0 0\n", "position_y"),
    ] {
        let path = dir.join(format!("{name}_sites.txt"));
        std::fs::write(&path, format!("{header}{body}")).unwrap();
        let out = sad(&["render", path.to_str().unwrap(), "-o", png]);
        assert_one_error(&out, needle, name);
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("Loaded"),
            "{name}"
        );
    }
    let image = format!("{DATA}/sad/astro64.png");
    let out_dir = dir.join("out");
    let out_dir = out_dir.to_str().unwrap();
    let fit = |extra: &[&str]| {
        let mut args = vec!["fit", image.as_str(), "--iters", "5", "--out-dir", out_dir];
        args.extend(extra);
        sad(&args)
    };
    assert_one_error(
        &fit(&["--target-bpp", "1e30"]),
        "--target-bpp",
        "target-bpp 1e30",
    );
    let array = dir.join("array.json");
    std::fs::write(&array, "[128000, 128000, 4000]").unwrap();
    let config = ["--config", array.to_str().unwrap()];
    assert_one_error(&fit(&config), "JSON object", "a JSON array as config");
    // A flag's error names the flag, not the config key behind it.
    assert_one_error(&fit(&["--iters", "0"]), "--iters", "--iters 0");
    let sites = format!("{DATA}/sad/astro128_sites.txt");
    let jpg = dir.join("o.jpg");
    let out = sad(&["render", &sites, "-o", jpg.to_str().unwrap()]);
    assert_one_error(&out, "only PNG", "-o x.jpg");
    assert!(!jpg.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn outputs_are_checked_before_the_work_and_written_as_a_unit() {
    let dir = scratch("outputs");
    // The input sites file is not an output.
    let sites = dir.join("copy_sites.png");
    std::fs::copy(format!("{DATA}/sad/astro128_sites.txt"), &sites).unwrap();
    let sites = sites.to_str().unwrap();
    let out = sad(&["render", sites, "-o", sites]);
    assert_one_error(&out, "overwrite the input", "-o onto the sites file");
    assert!(
        std::fs::read_to_string(sites)
            .unwrap()
            .starts_with("# SAD Sites")
    );
    // An output folder that cannot be made is found before training.
    let file = dir.join("a_file");
    std::fs::write(&file, b"").unwrap();
    let image = format!("{DATA}/sad/astro64.png");
    let below_a_file = file.join("out");
    let out = sad(&[
        "fit",
        &image,
        "--iters",
        "5",
        "--out-dir",
        below_a_file.to_str().unwrap(),
    ]);
    assert_one_error(
        &out,
        "cannot write the outputs there",
        "out-dir below a file",
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("Training"));
    // When the sites file cannot be written, the image is not replaced either, and no
    // temporary file stays behind.
    let out_dir = dir.join("fit");
    std::fs::create_dir_all(out_dir.join("astro64_sites.txt.partial")).unwrap();
    std::fs::write(out_dir.join("astro64.png"), b"old").unwrap();
    let args = [
        "fit",
        &image,
        "--iters",
        "5",
        "--sites",
        "200",
        "--max-sites",
        "200",
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_sad"))
        .args(args)
        .args(["--out-dir", out_dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_one_error(&out, "writing the outputs", "blocked sites file");
    assert_eq!(std::fs::read(out_dir.join("astro64.png")).unwrap(), b"old");
    assert!(!out_dir.join("astro64.png.partial").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn photos_over_max_dim_are_scaled_down_with_a_note() {
    let dir = scratch("scaled");
    let photos = dir.join("photos");
    std::fs::create_dir_all(&photos).unwrap();
    let square = photos.join("square.png");
    std::fs::copy(format!("{DATA}/sad/astro64.png"), &square).unwrap();
    let astro = image::open(&square).unwrap().to_rgb8();
    image::imageops::crop_imm(&astro, 0, 10, 64, 30)
        .to_image()
        .save(photos.join("wide.png"))
        .unwrap();
    let short = [
        "--max-dim",
        "40",
        "--iters",
        "6",
        "--sites",
        "60",
        "--max-sites",
        "60",
        "--prune-start",
        "2",
        "--prune-freq",
        "2",
        "--prune-end",
        "5",
    ];
    let run = |input: &Path, out: &Path| {
        let mut args = vec![
            "fit",
            input.to_str().unwrap(),
            "--out-dir",
            out.to_str().unwrap(),
        ];
        args.extend(short);
        let output = sad(&args);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{stderr}");
        stderr
    };
    // One photo: the note, and the outputs at the scaled size (MAX_DIM 40: s = 0.625).
    let single = dir.join("single");
    let stderr = run(&square, &single);
    assert!(
        stderr.contains("note:") && stderr.contains("64×64 is scaled down to 40×40"),
        "{stderr}"
    );
    assert_eq!(
        image::image_dimensions(single.join("square.png")).unwrap(),
        (40, 40)
    );
    // A data set: each scaled photo noted, and its row at the size it was fitted at (the
    // 64×30 crop: round(30 · 0.625) = 19 rows).
    let set = dir.join("set");
    let stderr = run(&photos, &set);
    assert_eq!(stderr.matches("is scaled down to").count(), 2, "{stderr}");
    assert!(stderr.contains("64×30 is scaled down to 40×19"), "{stderr}");
    let table = burn_sad::sad::dataset::ResultsTable::load(&set.join("results.csv")).unwrap();
    let mut sizes: Vec<(String, usize, usize)> = table
        .rows()
        .map(|row| (row.name.clone(), row.width, row.height))
        .collect();
    sizes.sort();
    assert_eq!(
        sizes,
        [("square.png".into(), 40, 40), ("wide.png".into(), 40, 19)],
        "rows"
    );
    assert_eq!(
        image::image_dimensions(set.join("wide.png")).unwrap(),
        (40, 19)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
