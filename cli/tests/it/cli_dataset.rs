//! `sad fit` over a data set, as a user runs it: a folder of real-photo crops, reruns that skip
//! what is done, `--force`, shards merged by `sad results`, a bad image among good ones, and a
//! run killed midway and resumed.

use crate::cli_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use burn_sad::sad::dataset::{ResultRow, ResultsTable};
use cli_support::{DATA, last_line, sad, scratch};

/// A short fit: 20 iterations of a 48×40 crop at 4 bpp.
const FIT: [&str; 16] = [
    "--iters",
    "20",
    "--sites",
    "120",
    "--max-sites",
    "120",
    "--prune-start",
    "5",
    "--prune-freq",
    "5",
    "--prune-end",
    "15",
    "--target-bpp",
    "4",
    "--log-freq",
    "10",
];

/// 48×40 crops of three scikit-image photos (see tests/data), as a data set in `dir`.
fn photo_crops(dir: &Path) -> Vec<&'static str> {
    std::fs::create_dir_all(dir).unwrap();
    let crops = [
        ("astronaut.png", 30, 20, "astronaut.png"),
        ("chelsea.png", 40, 50, "chelsea.png"),
        ("coffee.png", 30, 20, "coffee.jpg"),
    ];
    for (source, x, y, name) in crops {
        let photo = image::open(format!("{DATA}/{source}")).unwrap().to_rgb8();
        let crop = image::imageops::crop_imm(&photo, x, y, 48, 40).to_image();
        crop.save(dir.join(name)).unwrap();
    }
    crops.iter().map(|c| c.3).collect()
}

fn fit(inputs: &[&Path], out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<String> = vec!["fit".into()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend(FIT.iter().map(|s| s.to_string()));
    args.extend(["--out-dir".into(), out.display().to_string()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    sad(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn table(csv: &Path) -> Vec<ResultRow> {
    ResultsTable::load(csv)
        .expect("results table")
        .rows()
        .cloned()
        .collect()
}

fn mean_psnr(stdout: &[u8]) -> f64 {
    last_line(stdout)
        .strip_prefix("mean PSNR: ")
        .and_then(|rest| rest.strip_suffix(" dB"))
        .expect("last line `mean PSNR: <value> dB`")
        .parse()
        .unwrap()
}

/// No temporary or stray file is left in `out`: only the outputs and the results tables.
fn assert_only_outputs(out: &Path) {
    for entry in std::fs::read_dir(out).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let expected = name.ends_with(".png")
            || name.ends_with("_sites.txt")
            || (name.starts_with("results")
                && (name.ends_with(".csv") || name.ends_with(".jsonl")));
        assert!(expected, "stray file {name} in {}", out.display());
    }
}

#[test]
fn a_data_set_is_fitted_rerun_forced_and_sharded() {
    let dir = scratch("dataset");
    let photos = dir.join("photos");
    let names = photo_crops(&photos);
    let out = dir.join("out");
    let first = fit(&[&photos], &out, &[]);
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(
        first.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let rows = table(&out.join("results.csv"));
    assert_eq!(rows.len(), 3, "{stdout}");
    for (row, name) in rows
        .iter()
        .zip(["astronaut.png", "chelsea.png", "coffee.jpg"])
    {
        assert_eq!(row.name, name);
        assert!(row.succeeded(), "{row:?}");
        assert_eq!((row.width, row.height, row.iterations), (48, 40, 20));
        assert!(
            row.psnr > 12.0 && row.ssim > 0.0 && row.sites > 0,
            "{row:?}"
        );
        let stem = name.split('.').next().unwrap();
        assert!(out.join(format!("{stem}.png")).is_file());
        assert!(out.join(format!("{stem}_sites.txt")).is_file());
    }
    let jsonl = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert_eq!(jsonl.lines().count(), 3);
    let want = rows.iter().map(|r| r.psnr).sum::<f64>() / 3.0;
    assert!((mean_psnr(&first.stdout) - want).abs() < 1e-3, "{stdout}");
    assert_only_outputs(&out);

    // A rerun skips every finished image and leaves the table as it was.
    let again = fit(&[&photos], &out, &[]);
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(again.status.success(), "{stdout}");
    assert_eq!(stdout.matches("skipped").count(), 3 + 1, "{stdout}");
    assert_eq!(table(&out.join("results.csv")), rows);

    // --force fits them again; a quoted glob and a plain file name the same images.
    let glob = photos.join("*.png");
    let coffee = photos.join(names[2]);
    let forced = fit(&[&glob, &coffee], &out, &["--force"]);
    let stdout = String::from_utf8_lossy(&forced.stdout);
    assert!(
        forced.status.success(),
        "{}",
        String::from_utf8_lossy(&forced.stderr)
    );
    assert!(
        stdout.contains("This run: 3 fitted, 0 failed, 0 skipped"),
        "{stdout}"
    );
    assert_eq!(table(&out.join("results.csv")).len(), 3);

    // Two shards cover the set exactly once, and `sad results` merges them.
    let sharded = dir.join("sharded");
    for shard in ["1/2", "2/2"] {
        let run = fit(&[&photos], &sharded, &["--shard", shard]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    let one = table(&sharded.join("results.shard-1-of-2.csv"));
    let two = table(&sharded.join("results.shard-2-of-2.csv"));
    let mut covered: Vec<String> = one.iter().chain(&two).map(|r| r.name.clone()).collect();
    covered.sort();
    assert_eq!(covered, ["astronaut.png", "chelsea.png", "coffee.jpg"]);
    let merged_csv = dir.join("merged.csv");
    let merged = sad(&[
        "results",
        sharded.to_str().unwrap(),
        "-o",
        merged_csv.to_str().unwrap(),
    ]);
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    assert_eq!(table(&merged_csv).len(), 3);
    let want = one.iter().chain(&two).map(|r| r.psnr).sum::<f64>() / 3.0;
    assert!((mean_psnr(&merged.stdout) - want).abs() < 1e-3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_image_fails_its_row_and_the_others_are_fitted() {
    let dir = scratch("dataset-bad");
    let photos = dir.join("photos");
    photo_crops(&photos);
    std::fs::write(photos.join("broken.png"), b"\x89PNG\r\n\x1a\n not really").unwrap();
    let out = dir.join("out");
    let run = fit(&[&photos], &out, &[]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "a failed image must fail the run");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.lines().any(|l| l.starts_with("error: broken.png: ")),
        "{stderr}"
    );
    let rows = table(&out.join("results.csv"));
    assert_eq!(rows.len(), 4);
    let broken = rows.iter().find(|r| r.name == "broken.png").unwrap();
    assert!(
        !broken.succeeded() && !broken.error.contains('\n'),
        "{broken:?}"
    );
    assert_eq!(rows.iter().filter(|r| r.succeeded()).count(), 3);
    // The summary still ends the output, over the fitted images.
    assert!(last_line(&run.stdout).starts_with("mean PSNR: "));
    assert_only_outputs(&out);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_killed_run_resumes_where_it_stopped() {
    let dir = scratch("dataset-kill");
    let photos = dir.join("photos");
    photo_crops(&photos);
    let out = dir.join("out");
    let csv = out.join("results.csv");
    let mut args: Vec<String> = vec!["fit".into(), photos.display().to_string()];
    args.extend(FIT.iter().map(|s| s.to_string()));
    // Longer fits, so that the kill lands while the second image trains.
    args[3] = "100".into();
    args.extend(["--out-dir".into(), out.display().to_string()]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_sad"))
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while ResultsTable::load(&csv).map_or(0, |t| t.len()) == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "no image finished"
        );
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait().unwrap();
    let before = table(&csv);
    assert!(
        !before.is_empty() && before.len() < 3,
        "killed after {} of 3 images",
        before.len()
    );
    let resumed = Command::new(env!("CARGO_BIN_EXE_sad"))
        .args(&args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(
        resumed.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let after = table(&csv);
    assert_eq!(after.len(), 3);
    // What finished before the kill is kept as it was, not fitted again.
    for row in &before {
        assert!(after.contains(row), "{row:?} was fitted again");
        assert!(
            stdout.contains(&format!("{}: done before", row.name)),
            "{stdout}"
        );
    }
    assert_only_outputs(&out);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Inputs that name no usable data set are one clear error before any work.
#[test]
fn data_set_inputs_are_checked_first() {
    let dir = scratch("dataset-inputs");
    let photos = dir.join("photos");
    photo_crops(&photos);
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let twin = dir.join("twin");
    std::fs::create_dir_all(&twin).unwrap();
    std::fs::copy(photos.join("chelsea.png"), twin.join("chelsea.png")).unwrap();
    let out = dir.join("out");
    let cases: [(Vec<PathBuf>, &[&str], &str); 7] = [
        (vec![empty.clone()], &[], "no PNG or JPEG"),
        (vec![photos.join("*.gif")], &[], "matches no PNG or JPEG"),
        (
            vec![photos.clone(), twin.clone()],
            &[],
            "would both write chelsea.png",
        ),
        (vec![photos.clone()], &["--shard", "3/2"], "not a shard"),
        (
            vec![photos.clone()],
            &["--devices", "flex:x"],
            "must be a whole number",
        ),
        (
            vec![photos.clone()],
            &["--devices", "flex,abacus"],
            "unknown device `abacus`",
        ),
        (
            vec![photos.clone()],
            &["--mask", "mask.png"],
            "--mask IMAGE takes one photo",
        ),
    ];
    for (inputs, extra, needle) in cases {
        let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        let run = fit(&inputs, &out, extra);
        cli_support::assert_one_error(&run, needle, needle);
    }
    assert!(!out.join("results.csv").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Several images in flight on one device give each image the fit it gets alone. On Flex, whose
/// arithmetic is deterministic, that is the same numbers to the table's precision (wgpu's float
/// atomics make even two identical fits differ).
#[test]
fn images_in_flight_give_the_results_of_one_at_a_time() {
    let dir = scratch("dataset-jobs");
    let photos = dir.join("photos");
    photo_crops(&photos);
    let mut tables = Vec::new();
    // One at a time; then two devices (the same one twice) with two jobs each, three in flight.
    let runs: [&[&str]; 2] = [
        &["--device", "flex"],
        &["--devices", "flex,flex", "--jobs", "2"],
    ];
    for (i, flags) in runs.iter().enumerate() {
        let out = dir.join(format!("run-{i}"));
        let run = fit(&[&photos], &out, flags);
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(stdout.contains("device=Flex"), "{stdout}");
        tables.push(table(&out.join("results.csv")));
    }
    assert_eq!(tables[0].len(), 3);
    for (alone, together) in tables[0].iter().zip(&tables[1]) {
        assert_eq!(alone.name, together.name);
        assert_eq!(alone.sites, together.sites, "{}", alone.name);
        assert!(
            (alone.psnr - together.psnr).abs() < 1e-3,
            "{alone:?} {together:?}"
        );
        assert!(
            (alone.ssim - together.ssim).abs() < 1e-5,
            "{alone:?} {together:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
