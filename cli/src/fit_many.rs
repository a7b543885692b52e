//! `sad fit` over a data set: several images, folders or globs, one results table.

use std::collections::HashMap;

use anyhow::{Result, bail};
use burn::tensor::Device;
use burn_sad::sad::dataset::{DatasetEvent, DatasetOptions, collect_images, fit_many};
use burn_sad::sad::fit::FitOptions;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::fit_args::FitArgs;
use crate::fit_checks::{check_fit_memory, max_side, scaled_note};

/// Fits every image of the data set `args` names (or the shard's share), skipping those done
/// before, prints a line per image and the summary, its last line `mean PSNR: <value> dB`;
/// fails (after the others are done) if any image failed.
pub fn fit_many_command(
    args: &FitArgs,
    options: FitOptions,
    devices: Vec<(Device, String)>,
) -> Result<()> {
    let all = collect_images(&args.images)?;
    let (images, results_stem) = match args.shard {
        Some(shard) => (shard.select(&all), shard.results_stem()),
        None => (all.clone(), "results".to_owned()),
    };
    let iters = options.config.default_iters;
    let max_dim = options.config.effective_max_dim();
    let mask_alpha = match args.mask.as_deref() {
        None => false,
        Some("alpha") => true,
        Some(_) => anyhow::bail!(
            "--mask IMAGE takes one photo; in a data set, --mask alpha masks each image by its own \
             alpha channel"
        ),
    };
    let dataset = DatasetOptions {
        mask_alpha,
        max_side: max_side(&options),
        fit: options,
        out_dir: args.out_dir.clone(),
        force: args.force,
        results_stem,
        jobs: usize::from(args.jobs),
        format: args.format.into(),
    };
    let shard = args.shard.map_or(String::new(), |s| {
        format!(" | shard {}/{}", s.index, s.count)
    });
    let labels: Vec<&str> = devices.iter().map(|(_, label)| label.as_str()).collect();
    println!(
        "Data set | device={} | jobs={} | images={} of {}{shard} | iters={iters} | out-dir={}",
        labels.join(", "),
        args.jobs,
        images.len(),
        all.len(),
        args.out_dir.display()
    );
    let bars = MultiProgress::new();
    let overall = bars.add(ProgressBar::new(images.len() as u64));
    overall.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} images | {per_sec} | ETA {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let image_style = ProgressStyle::with_template("  {msg} {bar:20} {pos}/{len} it")
        .expect("valid template")
        .progress_chars("=> ");
    // A bar per image in flight, by row name.
    let mut active: HashMap<String, ProgressBar> = HashMap::new();
    // indicatif hides its bars, and the lines printed through them, off a terminal.
    let say = |line: String| {
        if bars.is_hidden() {
            println!("{line}");
        } else {
            let _ = bars.println(line);
        }
    };
    let report = fit_many(
        &images,
        &dataset,
        &devices,
        |file, device| {
            check_fit_memory(file, max_dim, device).map_err(|error| format!("{error:#}"))
        },
        |event| match event {
            DatasetEvent::Skipped(row) => {
                overall.inc(1);
                say(format!(
                    "{}: done before (PSNR {:.2} dB), skipped",
                    row.name, row.psnr
                ));
            }
            DatasetEvent::Started {
                name,
                width,
                height,
                scaled_from,
            } => {
                if let Some(from) = scaled_from {
                    bars.suspend(|| {
                        eprintln!("{}", scaled_note(name, from, (width, height), max_dim))
                    });
                }
                let bar = bars.add(ProgressBar::new(iters as u64));
                bar.set_style(image_style.clone());
                bar.set_message(format!("{name} {width}×{height}"));
                active.insert(name.to_owned(), bar);
            }
            DatasetEvent::Progress { name, progress } => {
                if let Some(bar) = active.get(name) {
                    bar.set_length(progress.iters as u64);
                    bar.set_position(progress.iteration as u64);
                }
            }
            DatasetEvent::Finished(row) => {
                if let Some(bar) = active.remove(&row.name) {
                    bar.finish_and_clear();
                    bars.remove(&bar);
                }
                overall.inc(1);
                if row.succeeded() {
                    say(format!(
                        "{}: PSNR {:.2} dB | SSIM {:.4} | {} sites ({:.2} bpp) | {:.2} s",
                        row.name, row.psnr, row.ssim, row.sites, row.bpp, row.training_s
                    ));
                } else {
                    eprintln!("error: {}: {}", row.name, row.error);
                }
            }
        },
    )?;
    overall.finish_and_clear();
    let csv = dataset.results_csv();
    println!("Saved: {}", csv.display());
    println!("Saved: {}", csv.with_extension("jsonl").display());
    println!(
        "This run: {} fitted, {} failed, {} skipped as done, {:.2} s",
        report.fitted,
        report.failed,
        report.skipped,
        report.wall.as_secs_f64()
    );
    // Throughput over this run's wall time where it fitted every row; else over training time.
    let wall = (report.skipped == 0).then_some(report.wall);
    println!("{}", report.table.summary(wall));
    if report.failed > 0 {
        bail!(
            "{} of {} images failed; their rows in {} say why",
            report.failed,
            images.len(),
            csv.display()
        );
    }
    Ok(())
}
