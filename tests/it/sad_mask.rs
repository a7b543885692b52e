//! Masked fits (the reference's `--mask`, and `--mask alpha`): the gradient and statistics
//! kernels, PSNR and the initialisation count only the kept pixels, against plain references
//! (`sad fit --mask` is tested with the CLI's tests).

use crate::common;

use burn::tensor::{Device, Tensor, TensorData};
use burn_sad::image::load_rgb;
use burn_sad::sad::BackwardStrategy::Auto;
use burn_sad::sad::fit::{
    FitError, FitOptions, InitialShape, Initialisation, StatisticsKind, TargetImage, Trainer,
    TrainingConfig, masked_psnr, reference, site_statistics, squared_error_gradients,
};
use burn_sad::sad::{Candidates, RenderGeometry, SiteTable, render_reference};
use common::{DATA, assert_close, device, random_sites, values};

const POSITION_X: usize = 0;

/// A crop of a real photo with a mask: nothing in the left third, graded values (all above 0)
/// elsewhere, so that both the cut and the "above 0 counts" rule show.
fn masked_crop(width: usize, height: usize, device: &Device) -> TargetImage {
    let image = load_rgb(format!("{DATA}/chelsea.png"), device).expect("photo");
    let crop = image.slice([0..1, 0..3, 40..40 + height, 60..60 + width]);
    let mask = (0..width * height)
        .map(|i| match i % width {
            x if x < width / 3 => 0.0,
            x => (1 + x % 3) as f32 / 3.0,
        })
        .collect();
    TargetImage::from_tensor(crop)
        .with_mask(mask)
        .expect("mask")
}

/// 1 where the mask keeps a pixel, as a `[1, H, W]` tensor.
fn kept(target: &TargetImage, device: &Device) -> Tensor<3> {
    let keep: Vec<f32> = (0..target.width * target.height)
        .map(|i| f32::from(target.counts(i % target.width, i / target.width)))
        .collect();
    Tensor::from_data(
        TensorData::new(keep, [1, target.height, target.width]),
        device,
    )
}

#[test]
fn the_loss_and_statistics_count_only_the_kept_pixels() {
    let device = device();
    let (width, height) = (41, 33);
    let target = masked_crop(width, height, &device);
    assert_eq!(target.counted_pixels(), (width - width / 3) * height);
    let marked = target.to_tensor(&device);
    let table = random_sites(60, 4, width, height, 5);
    let sites = table.to_tensor(64, &device);
    let geometry = RenderGeometry::new(width, height);
    let candidates = Candidates::exact(&sites, geometry);

    // Gradients: the fused pass against autodiff of Σ keep·(render − target)².
    let (grads, removal) = squared_error_gradients(&sites, &candidates, &marked, true, Auto);
    let tracked = sites.clone().autodiff().require_grad();
    let image = render_reference(tracked.clone(), candidates.ids(), geometry);
    let error = (image - target.pixels_tensor(&device)) * kept(&target, &device);
    let backward = (error.clone() * error).sum().backward();
    let want = values(tracked.grad(&backward).expect("tracked").inner());
    let got = values(grads);
    assert_close(&got, &want, 2e-3, 2e-3, "masked gradients");
    let unmasked = values(
        squared_error_gradients(
            &sites,
            &candidates,
            &target.pixels_tensor(&device),
            false,
            Auto,
        )
        .0,
    );
    assert!(
        got.iter().zip(&unmasked).any(|(a, b)| (a - b).abs() > 1e-3),
        "the mask changed no gradient"
    );

    // Statistics and the removal delta: the kernels against the host reference, which skips
    // the pixels outside the mask.
    let ids = candidates.ids().try_to_vec_as::<i32>().unwrap();
    let host = SiteTable::from_tensor(sites.clone(), width, height);
    let delta = reference::site_statistics_reference(
        &host.sites,
        &ids,
        &target,
        geometry,
        StatisticsKind::RemovalDelta,
    );
    assert_close(
        &values(removal.expect("removal")),
        &delta,
        2e-3,
        2e-3,
        "removal delta",
    );
    let kind = StatisticsKind::Densify;
    let got = values(site_statistics(&sites, &candidates, &marked, kind));
    let want = reference::site_statistics_reference(&host.sites, &ids, &target, geometry, kind);
    assert_close(&got, &want, 2e-3, 2e-3, "densify statistics");
    // PSNR over the kept pixels, against a host sum.
    let render = render_reference(sites, candidates.ids(), geometry);
    let rendered = values(render.clone());
    let plane = width * height;
    let (mut sum, mut count) = (0f64, 0usize);
    for i in 0..plane {
        if target.counts(i % width, i / width) {
            count += 1;
            for c in 0..3 {
                sum += f64::from(rendered[c * plane + i] - target.planar[c * plane + i]).powi(2);
            }
        }
    }
    let want = -10.0 * (sum / (count as f64 * 3.0)).log10();
    let got = masked_psnr(render, marked);
    assert!((got - want).abs() < 1e-3, "PSNR {got} against {want}");
}

#[test]
fn the_initialisation_places_sites_only_inside_the_mask() {
    let device = device();
    let target = masked_crop(60, 40, &device);
    let shape = InitialShape {
        log_tau: 5.0,
        radius: 4.0,
    };
    let init = Initialisation::GradientWeighted {
        sites: 300,
        alpha: 1.0,
    };
    let table = init.sites(&target, shape, 0);
    let live: Vec<_> = table
        .sites
        .iter()
        .filter(|s| s[POSITION_X] >= 0.0)
        .collect();
    assert!(live.len() > 100, "{} live sites", live.len());
    assert!(
        live.iter()
            .all(|s| target.mask_at(s[0] as usize, s[1] as usize) > 0.0),
        "a site in the masked-out third"
    );
}

#[test]
fn masks_are_checked() {
    let device = device();
    let plain = || masked_crop(12, 10, &device);
    let reasons = [
        (plain().with_mask(vec![1.0; 7]), "7 values for 12×10"),
        (plain().with_mask(vec![2.0; 120]), "[0, 1]"),
        (plain().with_mask(vec![0.0; 120]), "keeps no pixel"),
    ];
    for (result, needle) in reasons {
        let Err(FitError::Image(message)) = result else {
            panic!("accepted a bad mask ({needle})");
        };
        assert!(message.contains(needle), "{message}");
    }
    let options = FitOptions {
        ssim_weight: 0.5,
        ..FitOptions::new(TrainingConfig::default())
    };
    let refused = Trainer::new(plain(), options, &device);
    assert!(matches!(refused, Err(FitError::Config(m)) if m.contains("mask")));
}
