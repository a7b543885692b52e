//! `sad`'s messages: each error said once and in one line, a budget the schedule cannot reach
//! as a warning that says why, and `sad fit --help` stating every key's shipped default.

use crate::cli_support;

use std::process::Command;

use cli_support::{DATA, assert_one_error, sad, scratch};

#[test]
fn messages_say_it_once_and_right() {
    let dir = scratch("messages");
    let missing = "/nonexistent/photo.png";
    let out = sad(&["ssim", missing, missing]);
    assert_one_error(&out, missing, "missing file");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("No such file or directory").count(),
        1,
        "{stderr}"
    );
    let folder = dir.to_str().unwrap();
    assert_one_error(
        &sad(&["ssim", folder, folder]),
        "is a directory",
        "a folder",
    );
    let garbage = dir.join("garbage.png");
    std::fs::write(&garbage, b"not a png at all").unwrap();
    let garbage = garbage.to_str().unwrap();
    let out = sad(&["ssim", garbage, garbage]);
    assert_one_error(&out, "garbage.png", "garbage");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.matches("signature").count() <= 1, "{stderr}");
    // A JPEG named .png is read by its content.
    let jpeg_named_png = dir.join("photo.png");
    let photo = image::open(format!("{DATA}/chelsea.png"))
        .unwrap()
        .to_rgb8();
    photo
        .save_with_format(&jpeg_named_png, image::ImageFormat::Jpeg)
        .unwrap();
    let path = jpeg_named_png.to_str().unwrap();
    let out = sad(&["ssim", path, path]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A missing sites file is named once; a negative count is a bad value, not a flag.
    let image = format!("{DATA}/sad/astro64.png");
    let out = sad(&["fit", &image, "--init-from-sites", "/nonexistent/nope.txt"]);
    assert_one_error(&out, "/nonexistent/nope.txt", "missing sites file");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("nope.txt").count(), 1, "{stderr}");
    let out = sad(&["fit", &image, "--iters", "-1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("invalid digit") && !stderr.contains("-- -1"),
        "{stderr}"
    );
    // A truncated JPEG is an error, not an image with grey rows.
    let jpeg = std::fs::read(&jpeg_named_png).unwrap();
    let truncated = dir.join("truncated.jpg");
    std::fs::write(&truncated, &jpeg[..jpeg.len() / 2]).unwrap();
    let truncated = truncated.to_str().unwrap();
    assert_one_error(
        &sad(&["ssim", truncated, truncated]),
        "truncated",
        "a truncated JPEG",
    );
    // A budget the capacity cannot meet is a warning that names the flag to raise.
    let out_dir = dir.join("out");
    let args = [
        "fit",
        &image,
        "--iters",
        "5",
        "--sites",
        "300",
        "--max-sites",
        "300",
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_sad"))
        .args(args)
        .args([
            "--target-bpp",
            "200",
            "--out-dir",
            out_dir.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: the budget asks for 6400 sites"),
        "{stderr}"
    );
    assert!(stderr.contains("--max-sites"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_budget_the_schedule_cannot_reach_is_a_warning() {
    let dir = std::env::temp_dir().join(format!("sad-short-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_sad"))
        .args([
            "fit",
            &format!("{DATA}/sad/astro64.png"),
            "--iters",
            "60",
            "--sites",
            "300",
        ])
        .args(["--target-bpp", "2", "--out-dir", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr
            .contains("warning: no densify and prune rates make this schedule end at the 64 sites"),
        "{stderr}"
    );
    assert!(
        stderr.contains("it ends at 300 (9.4 bpp), as the run ends at iteration 60, before pruning starts at 100"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fit_help_states_every_default_and_it_is_the_shipped_one() {
    let out = sad(&["fit", "--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout).replace('\n', " ");
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let shipped: serde_json::Value =
        serde_json::from_str(include_str!("../../../tests/data/sad/training_config.json")).unwrap();
    let mut checked = 0;
    for (key, value) in shipped.as_object().unwrap() {
        // "(default 128 000, DEFAULT_SITES)" or "(default 0.01, DENSIFY_PERCENTILE; …)".
        let Some(at) = help.find(&format!(", {key}")) else {
            continue;
        };
        let before = &help[..at];
        let stated = before[before.rfind("default ").expect("a default") + 8..].replace(' ', "");
        match value {
            serde_json::Value::Bool(flag) => assert_eq!(stated, flag.to_string(), "{key}"),
            number => {
                let shipped = number.as_f64().unwrap();
                let stated: f64 = stated.parse().unwrap_or_else(|_| panic!("{key}: {stated}"));
                assert_eq!(stated, shipped, "{key}");
            }
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} keys have a stated default");
}

/// With the Vulkan driver hidden, wgpu's CPU adapter is what is left: Mesa's OpenGL one where it
/// is installed (no f32 atomics: the SAD training kernels cannot run there), else none. `sad fit`
/// on it refuses in one line before work starts, or (an adapter that can) runs; never a panic.
#[test]
fn fit_on_an_adapter_that_cannot_train_refuses_in_one_line() {
    let dir = scratch("no-vulkan");
    let out = Command::new(env!("CARGO_BIN_EXE_sad"))
        .args([
            "--device",
            "wgpu-cpu",
            "fit",
            &format!("{DATA}/sad/astro64.png"),
        ])
        .args(["--iters", "2", "--sites", "64", "--max-sites", "64"])
        .args(["--out-dir", dir.to_str().unwrap()])
        .env("VK_ICD_FILENAMES", "/nonexistent.json")
        .env("VK_DRIVER_FILES", "/nonexistent.json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => eprintln!("this machine's remaining adapter trains: the fit ran"),
        Some(1) => {
            assert_one_error(&out, "device `WgpuCpu`", "no Vulkan driver");
            assert!(
                stderr.contains("cannot run the SAD training kernels")
                    || stderr.contains("failed to initialise"),
                "{stderr}"
            );
            assert!(!dir.join("astro64.png").exists(), "an output was written");
        }
        code => panic!("exit code {code:?}: {stderr}"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
