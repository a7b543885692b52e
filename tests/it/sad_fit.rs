//! SAD fitting: the statistics, gradient and prune kernels against their host references, and
//! whole fits (the step after the gradient pass, tau diffusion and Adam, is in `sad_step.rs`;
//! the training config and the budget solver are in `sad_files.rs`).

use crate::common;

use burn::tensor::{Device, Tensor, TensorData};
use burn_sad::image::load_rgb;
use burn_sad::sad::BackwardStrategy::Auto;
use burn_sad::sad::fit::{
    FitError, FitOptions, Initialisation, StatisticsKind, TargetImage, Trainer, TrainingConfig,
    fit, prune_candidates, prune_sites, reference, site_statistics, squared_error_gradients,
};
use burn_sad::sad::{Candidates, RenderGeometry, SiteTable, render, render_reference};
use burn_sad_kernels::sad::FIXED_LIMIT;
use common::{DATA, assert_close, device, random_sites, values};

fn photo_crop(width: usize, height: usize, device: &Device) -> TargetImage {
    let image = load_rgb(format!("{DATA}/chelsea.png"), device).expect("photo");
    TargetImage::from_tensor(image.slice([0..1, 0..3, 20..20 + height, 30..30 + width]))
}

#[test]
fn site_statistics_match_the_host_reference_on_a_photo() {
    let device = device();
    let (width, height) = (37, 29);
    let target = photo_crop(width, height, &device);
    let table = random_sites(55, 5, width, height, 3);
    let sites = table.to_tensor(64, &device);
    let geometry = RenderGeometry::new(width, height);
    let candidates = Candidates::exact(&sites, geometry);
    let ids = candidates.ids().try_to_vec_as::<i32>().unwrap();
    let host = SiteTable::from_tensor(sites.clone(), width, height);
    for kind in [StatisticsKind::RemovalDelta, StatisticsKind::Densify] {
        let got = values(site_statistics(
            &sites,
            &candidates,
            &target.to_tensor(&device),
            kind,
        ));
        let want = reference::site_statistics_reference(&host.sites, &ids, &target, geometry, kind);
        assert!(
            want.iter().any(|v| *v != 0.0),
            "{kind:?}: nothing accumulated"
        );
        assert_close(&got, &want, 2e-3, 2e-3, &format!("{kind:?}"));
    }
}

#[test]
fn the_gradient_pass_sums_removal_deltas_like_the_statistics_pass() {
    let device = device();
    let (width, height) = (43, 31);
    let target = photo_crop(width, height, &device).to_tensor(&device);
    let table = random_sites(70, 6, width, height, 11);
    let sites = table.to_tensor(80, &device);
    let geometry = RenderGeometry::new(width, height);
    let candidates = Candidates::exact(&sites, geometry);
    let (plain, none) = squared_error_gradients(&sites, &candidates, &target, false, Auto);
    assert!(none.is_none(), "no removal column was asked for");
    let (grads, removal) = squared_error_gradients(&sites, &candidates, &target, true, Auto);
    assert_eq!(grads.dims(), [80, 10]);
    assert_close(
        &values(grads),
        &values(plain),
        1e-4,
        1e-4,
        "gradients with and without the removal column",
    );
    let got = values(removal.expect("removal column"));
    let ids = candidates.ids().try_to_vec_as::<i32>().unwrap();
    let host = SiteTable::from_tensor(sites, width, height);
    let image = TargetImage::from_tensor(target);
    let want = reference::site_statistics_reference(
        &host.sites,
        &ids,
        &image,
        geometry,
        StatisticsKind::RemovalDelta,
    );
    assert!(
        want.iter().any(|v| *v != 0.0 && *v < 1e5),
        "no removal cost"
    );
    assert_close(&got, &want, 2e-3, 2e-3, "removal delta");
}

/// ∂/∂sites of Σ (image − target)² through `op` and Burn's autodiff.
fn squared_error_autodiff(
    op: impl Fn(Tensor<2>) -> Tensor<3>,
    sites: &Tensor<2>,
    target: &Tensor<3>,
) -> Vec<f32> {
    let tracked =
        Tensor::<2>::from_data(sites.to_data(), &sites.device().autodiff()).require_grad();
    let target = Tensor::<3>::from_data(target.to_data(), &tracked.device());
    let error = op(tracked.clone()) - target;
    let grads = (error.clone() * error).sum().backward();
    values(tracked.grad(&grads).expect("the sites are tracked").inner())
}

/// The fit's gradient pass sums in fixed point (`TableSums::Fixed`), under every backward
/// strategy the device runs. Against the plain-tensor reference on a photo with soft sites, and
/// against the render op's own backward (float sums, the same per-pixel terms) with soft sites
/// and with sharp ones, whose largest per-site sums reach past [`FIXED_LIMIT`] (a single value
/// that large would go to the global sums as a float).
#[test]
fn squared_error_gradients_match_the_reference_and_the_float_sums() {
    let device = device();
    let (width, height) = (57, 37);
    let target = photo_crop(width, height, &device).to_tensor(&device);
    let geometry = RenderGeometry::new(width, height);
    for (what, sharpen) in [("soft sites", 0.0), ("sharp sites", 10.0)] {
        let mut table = random_sites(90, 5, width, height, 23);
        for site in table.sites.iter_mut().filter(|s| s[0] >= 0.0) {
            site[2] += sharpen;
        }
        let sites = table.to_tensor(100, &device);
        let candidates = Candidates::exact(&sites, geometry);
        let float_sums = squared_error_autodiff(|s| render(s, &candidates), &sites, &target);
        for strategy in common::backward_strategies(&device, what) {
            let (grads, _) = squared_error_gradients(&sites, &candidates, &target, false, strategy);
            assert_close(
                &values(grads),
                &float_sums,
                2e-5,
                1e-5,
                &format!("{what}, fixed-point sums under {strategy}, float sums"),
            );
        }
        let (grads, _) = squared_error_gradients(&sites, &candidates, &target, false, Auto);
        let grads = values(grads);
        if sharpen > 0.0 {
            let largest = float_sums.iter().fold(0f32, |m, v| m.max(v.abs()));
            assert!(
                largest > FIXED_LIMIT,
                "{what}: the largest sum, {largest}, stays inside the fixed-point range"
            );
        }
        assert_close(
            &grads,
            &float_sums,
            2e-5,
            1e-5,
            &format!("{what}, float sums"),
        );
        if sharpen == 0.0 {
            let reference = squared_error_autodiff(
                |s| render_reference(s, candidates.ids(), geometry),
                &sites,
                &target,
            );
            assert_close(&grads, &reference, 1e-4, 1e-3, "soft sites, reference");
        }
    }
}

#[test]
fn device_prune_selects_what_the_host_selects() {
    let device = device();
    // Over 256 sites, so the id takes two radix digits; few distinct deltas, so ties are
    // broken by id; negative deltas (as 0), non-finite deltas and dead sites are never picked
    // before live finite ones.
    let capacity = 700;
    let table = random_sites(capacity - 40, 40, 64, 48, 21);
    let sites = table.to_tensor(capacity, &device);
    let delta: Vec<f32> = (0..capacity)
        .map(|i| match i % 11 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => -0.25,
            3 => 1e6,
            k => ((i * 7919) % 5) as f32 * 0.125 + k as f32 * 1e-3 * ((i % 3) as f32),
        })
        .collect();
    let removal = Tensor::<1>::from_data(TensorData::new(delta.clone(), [capacity]), &device);
    let positions_x: Vec<f32> = table.sites.iter().map(|s| s[0]).collect();
    let prunable = (0..capacity)
        .filter(|&i| positions_x[i] >= 0.0 && delta[i].is_finite())
        .count();
    let norm = 0.5;
    for count in [1, 2, 5, 64, 257, prunable - 1, prunable, prunable + 30] {
        let got = values(prune_sites(sites.clone(), removal.clone(), count, norm));
        let doomed = prune_candidates(&positions_x, &delta, norm, count);
        assert_eq!(doomed.len(), count.min(prunable), "count {count}");
        let mut want = table.sites.clone();
        for id in doomed {
            want[id][0] = -1.0;
            want[id][1] = -1.0;
        }
        assert_eq!(got, want.concat(), "count {count}");
    }
    let untouched = values(prune_sites(sites.clone(), removal, 0, norm));
    assert_eq!(untouched, values(sites), "a count of 0 prunes nothing");
}

fn small_config(iters: usize) -> TrainingConfig {
    TrainingConfig {
        default_iters: iters,
        default_sites: 300,
        default_max_sites: 300,
        prune_start: 40,
        prune_freq: 20,
        prune_end: iters - 20,
        ..TrainingConfig::default()
    }
}

#[test]
fn densify_and_prune_land_on_the_site_count_the_solver_predicts() {
    let device = device();
    let target = photo_crop(48, 40, &device);
    let config = TrainingConfig {
        default_sites: 200,
        default_max_sites: 400,
        default_target_bpp: 8.0,
        densify_start: 10,
        densify_freq: 10,
        densify_end: 60,
        ..small_config(120)
    };
    let trainer = Trainer::new(target, FitOptions::new(config), &device).expect("trainer");
    let budget = trainer.budget().expect("solver ran");
    assert_eq!(budget.target_sites, 120);
    let predicted = trainer.schedule().final_sites();
    assert_eq!(predicted, budget.final_sites);
    assert!(
        budget.densify_rate > 0.0 && budget.prune_rate > 0.0,
        "{budget:?}"
    );
    // The buffer holds the slots the schedule fills, fewer than the configured 400; densify
    // checks every child slot against it, so the run below stays inside it.
    let slots = trainer.sites().dims()[0];
    assert_eq!(slots, trainer.schedule().peak_slots(200));
    assert!(slots > 200 && slots < 400, "{slots} slots");
    let result = trainer.run(|_| {});
    assert_eq!(result.sites.sites.len(), predicted);
    assert!(result.psnr.is_finite());
}

fn fit_crop(seed: u64, device: &Device) -> burn_sad::sad::fit::FitResult {
    let target = TargetImage::from_tensor(
        load_rgb(format!("{DATA}/sad/astro64.png"), device).expect("fixture"),
    );
    let options = FitOptions {
        seed,
        log_every: 50,
        ..FitOptions::new(TrainingConfig {
            default_target_bpp: 8.0,
            ..small_config(200)
        })
    };
    fit(&target, options, device, |_| {}).expect("fit")
}

#[test]
fn a_photo_crop_fits_to_the_measured_psnr() {
    let result = fit_crop(0, &device());
    // 64×64 at 8 bpp = 256 sites after 200 iterations.
    assert_eq!(result.sites.sites.len(), 256);
    assert!((result.bits_per_pixel - 8.0).abs() < 1e-9);
    assert!(
        result.psnr >= PSNR_BAR,
        "PSNR {:.2} dB below the bar {PSNR_BAR}",
        result.psnr
    );
    assert!(
        result.ssim > 0.5 && result.ssim < 1.0,
        "SSIM {}",
        result.ssim
    );
}

/// The bar of [`a_photo_crop_fits_to_the_measured_psnr`], from a measurement on the H200: the
/// reference trainer (`sad_cuda astro64.png --target-bpp 8 --iters 200 --sites 300 --max-sites
/// 300 --prune-start 40 --prune-freq 20 --prune-end 180`) reached 23.76 to 24.07 dB (mean
/// 23.89) in five runs (its float atomics make runs differ); ours reached 23.70 dB on CUDA and
/// on lavapipe. The bar is the reference's mean less 0.5 dB.
const PSNR_BAR: f64 = 23.4;

#[cfg(feature = "flex")]
#[test]
fn seeded_fits_are_deterministic_on_the_cpu_backend() {
    // Flex whatever the device under test: run once, in the run on Flex (CI's `flex` step).
    if common::runs_kernels(
        &device(),
        "seeded_fits_are_deterministic_on_the_cpu_backend",
    ) {
        common::say(
            "seeded_fits_are_deterministic_on_the_cpu_backend: runs on Flex only (BURN_SAD_DEVICE=flex)",
        );
        return;
    }
    let flex = Device::flex();
    // A 32×24 crop for 80 iterations, with densify and prune events: the seeded parts of a
    // fit at a tenth of `fit_crop`'s cost (on Flex the host references run unoptimised).
    let fit_small = |seed| {
        let options = FitOptions {
            seed,
            log_every: 40,
            ..FitOptions::new(TrainingConfig {
                default_target_bpp: 8.0,
                densify_start: 20,
                densify_freq: 20,
                densify_end: 60,
                ..small_config(80)
            })
        };
        fit(&photo_crop(32, 24, &flex), options, &flex, |_| {}).expect("fit")
    };
    let first = fit_small(7);
    let second = fit_small(7);
    assert_eq!(first.sites, second.sites);
    assert_eq!(first.psnr, second.psnr);
    let other = fit_small(8);
    assert_ne!(first.sites, other.sites, "the seed changes the run");
}

#[test]
fn unusable_images_and_options_are_errors() {
    let device = device();
    let target = photo_crop(16, 12, &device);
    let options = |config: TrainingConfig| FitOptions::new(config);
    let too_big = Trainer::new(
        target.clone(),
        options(TrainingConfig {
            max_dim: 15,
            ..small_config(60)
        }),
        &device,
    );
    assert!(matches!(too_big, Err(FitError::Image(m)) if m.contains("MAX_DIM")));
    let flat = TargetImage {
        width: 8,
        height: 8,
        planar: vec![0.25; 192],
        mask: None,
    };
    let no_sites = Trainer::new(flat, options(small_config(60)), &device);
    assert!(matches!(no_sites, Err(FitError::NoSites)));
    let bad_lr = Trainer::new(
        target,
        FitOptions {
            lr_scale: 0.0,
            ..options(small_config(60))
        },
        &device,
    );
    assert!(matches!(bad_lr, Err(FitError::Config(m)) if m.contains("--lr")));
}

#[test]
fn per_pixel_and_from_sites_initialisations_train() {
    let device = device();
    let target = photo_crop(20, 16, &device);
    let config = TrainingConfig {
        default_target_bpp: 32.0,
        ..small_config(100)
    };
    let per_pixel = fit(
        &target,
        FitOptions {
            init: Initialisation::PerPixel,
            ..FitOptions::new(config.clone())
        },
        &device,
        |_| {},
    )
    .expect("per-pixel fit");
    assert_eq!(per_pixel.sites.sites.len(), 80);
    assert!(per_pixel.psnr > 25.0, "per-pixel PSNR {}", per_pixel.psnr);
    // Resume from those sites at twice the size: positions scale with the image.
    let larger = photo_crop(40, 32, &device);
    let resumed = Trainer::new(
        larger,
        FitOptions {
            init: Initialisation::FromSites(per_pixel.sites.clone()),
            ..FitOptions::new(config)
        },
        &device,
    )
    .expect("from-sites trainer");
    let table = SiteTable::from_tensor(resumed.sites(), 40, 32);
    assert_eq!(table.active(), 80);
    let max_x = table.sites.iter().map(|s| s[0]).fold(0.0, f32::max);
    assert!(max_x > 30.0, "positions were rescaled (max x {max_x})");
}
