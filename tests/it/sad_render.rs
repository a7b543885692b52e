//! The SAD render op against its plain-tensor reference (forward and all 10 gradients, and the
//! render from records packed once), finite differences, bad inputs, the `Sites` module under a
//! stock optimizer, and non-square images (candidate lists: `sad_candidates.rs`; sites files and
//! render-only mode: `sad_files.rs`). Run on the device of `$BURN_SAD_DEVICE`.

use crate::common;

use burn::tensor::{Device, Distribution, Tensor, TensorData};
use burn_sad::image::load_rgb;
use burn_sad::sad::{
    BackwardStrategy, Candidates, RenderGeometry, RenderOnlyOptions, RenderReadySites, SadError,
    SiteTable, exact_candidates, read_sites, render, render_ready, render_reference, render_sites,
    render_with, try_render, try_render_with,
};
use burn_sad::ssim::uses_fused_kernels;
use common::{assert_close, device, random_sites, values};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sad");

fn geometry(table: &SiteTable) -> RenderGeometry {
    RenderGeometry::new(table.width, table.height)
}

fn exact(table: &SiteTable, device: &Device) -> Candidates {
    let geometry = geometry(table);
    let ids = exact_candidates(&table.sites, geometry);
    Candidates::from_ids(
        Tensor::from_data(TensorData::new(ids, [geometry.cells(), 8]), device),
        geometry,
    )
}

/// Value of Σ upstream·image and the gradient with respect to the sites, through `op`.
fn image_and_grad(
    op: impl Fn(Tensor<2>) -> Tensor<3>,
    sites: &Tensor<2>,
    upstream: &Tensor<3>,
) -> (Vec<f32>, Vec<f32>) {
    let device = sites.device().autodiff();
    let tracked = Tensor::<2>::from_data(sites.to_data(), &device).require_grad();
    let upstream = Tensor::<3>::from_data(upstream.to_data(), &device);
    let image = op(tracked.clone());
    let grads = (image.clone() * upstream).sum().backward();
    let grad = tracked.grad(&grads).expect("sites gradient");
    (values(image), values(grad.inner()))
}

fn check_against_reference(table: &SiteTable, candidates: &Candidates, what: &str) {
    let device = device();
    let geometry = geometry(table);
    let sites = table.to_tensor(table.sites.len(), &device);
    let upstream = Tensor::<3>::random(
        [3, table.height, table.width],
        Distribution::Uniform(-1.0, 1.0),
        &device,
    );
    let (fused_image, fused_grad) = image_and_grad(|s| render(s, candidates), &sites, &upstream);
    // Every backward strategy the device runs sums the same gradient, up to the order of float
    // additions (the reference comparison below takes the default's).
    for strategy in common::backward_strategies(&device, what) {
        let (image, grad) =
            image_and_grad(|s| render_with(s, candidates, strategy), &sites, &upstream);
        assert_eq!(image, fused_image, "{what}: image under {strategy}");
        let scale = fused_grad.iter().fold(0f32, |m, g| m.max(g.abs()));
        assert_close(
            &grad,
            &fused_grad,
            1e-5 * scale,
            1e-4,
            &format!("{what}: gradient under {strategy}"),
        );
    }
    // Render-only mode packs the records once and renders from them: the same image, bit for bit.
    let ready = values(render_ready(
        &RenderReadySites::new(sites.clone()),
        candidates,
    ));
    assert_eq!(ready, fused_image, "{what}: render from packed records");
    let ids = candidates.ids();
    let (ref_image, ref_grad) = image_and_grad(
        |s| {
            let ids = Tensor::from_data(ids.to_data(), &s.device());
            render_reference(s, ids, geometry)
        },
        &sites,
        &upstream,
    );
    assert_close(
        &fused_image,
        &ref_image,
        1e-5,
        1e-4,
        &format!("{what} image"),
    );
    // Per parameter, relative to that parameter's largest gradient.
    for p in 0..10 {
        let column = |g: &[f32]| g.iter().skip(p).step_by(10).copied().collect::<Vec<_>>();
        let (fused, reference) = (column(&fused_grad), column(&ref_grad));
        let scale = reference.iter().fold(0f32, |m, g| m.max(g.abs()));
        assert!(
            scale > 0.0,
            "{what}: parameter {p} has an all-zero gradient"
        );
        assert_close(
            &fused,
            &reference,
            2e-4 * scale,
            2e-3,
            &format!("{what} d/dparam{p}"),
        );
    }
    // Inactive slots get exactly zero gradient.
    for (i, site) in table.sites.iter().enumerate() {
        if site[0] < 0.0 {
            assert!(fused_grad[i * 10..i * 10 + 10].iter().all(|&g| g == 0.0));
        }
    }
}

#[test]
fn render_matches_reference_with_exact_lists() {
    let device = device();
    for (count, dead, width, height, seed) in [(60, 5, 37, 29, 1), (300, 20, 53, 41, 2)] {
        let table = random_sites(count, dead, width, height, seed);
        let candidates = exact(&table, &device);
        check_against_reference(&table, &candidates, &format!("{width}x{height} exact"));
    }
}

#[test]
fn render_matches_reference_with_raw_random_lists() {
    // The training initialisation holds duplicates and pruned ids: each slot counts on its own.
    let device = device();
    let table = random_sites(90, 10, 31, 23, 3);
    let sites = table.to_tensor(table.sites.len(), &device);
    let candidates = Candidates::random(&sites, geometry(&table), 0);
    check_against_reference(&table, &candidates, "31x23 random");
}

#[test]
fn gradients_match_finite_differences() {
    let device = device();
    let mut table = random_sites(40, 0, 21, 17, 4);
    // Softer blends (τ ≈ 16–27 instead of up to 650) keep the loss smooth at the step sizes
    // f32 rendering allows.
    for site in &mut table.sites {
        site[2] = 2.0 + 0.2 * site[2];
    }
    let candidates = exact(&table, &device);
    let sites = table.to_tensor(40, &device);
    let upstream = common::random([3, 17, 21], 41, &device)
        .mul_scalar(2.0)
        .sub_scalar(1.0);
    let (_, grad) = image_and_grad(|s| render(s, &candidates), &sites, &upstream);
    let base = values(sites.clone());
    let weights: Vec<f64> = values(upstream.clone())
        .into_iter()
        .map(f64::from)
        .collect();
    // Σ upstream·image summed in f64 on the host, so rounding stays far below the differences.
    let loss = |v: &[f32]| -> f64 {
        let s = Tensor::<2>::from_data(TensorData::new(v.to_vec(), [40, 10]), &device);
        let image = values(render(s, &candidates));
        image
            .iter()
            .zip(&weights)
            .map(|(&p, w)| f64::from(p) * w)
            .sum()
    };
    // Richardson extrapolation removes the O(eps²) error of a central difference.
    let derivative = |perturbed: &dyn Fn(f32) -> Vec<f32>, eps: f32| {
        let central =
            |eps: f32| (loss(&perturbed(eps)) - loss(&perturbed(-eps))) / (2.0 * eps as f64);
        (4.0 * central(eps / 2.0) - central(eps)) / 3.0
    };
    let check = |numeric: f64, analytic: f64, what: String| {
        assert!(
            (numeric - analytic).abs() <= 2e-3 + 2e-2 * analytic.abs(),
            "{what}: finite difference {numeric}, analytic {analytic}"
        );
    };
    for site in [0, 7, 19, 33] {
        let at = |p: usize| site * 10 + p;
        for (p, eps) in [
            (0, 1e-2),
            (1, 1e-2),
            (2, 1e-3),
            (3, 1e-2),
            (4, 1e-2),
            (5, 1e-2),
            (6, 1e-2),
            (9, 1e-3),
        ] {
            let shifted = |delta: f32| {
                let mut v = base.clone();
                v[at(p)] += delta;
                v
            };
            let numeric = derivative(&shifted, eps);
            check(
                numeric,
                grad[at(p)] as f64,
                format!("site {site} parameter {p}"),
            );
        }
        // The direction is a unit vector (the optimiser renormalises it): turn it, since off the
        // unit circle max(|δ|² − (u·δ)², 0) clamps and the loss has a kink there.
        let (ux, uy) = (base[at(7)], base[at(8)]);
        let turned = |angle: f32| {
            let mut v = base.clone();
            let (sin, cos) = angle.sin_cos();
            v[at(7)] = ux * cos - uy * sin;
            v[at(8)] = ux * sin + uy * cos;
            v
        };
        let numeric = derivative(&turned, 1e-3);
        let analytic = (grad[at(7)] * -uy + grad[at(8)] * ux) as f64;
        check(numeric, analytic, format!("site {site} direction"));
        // And shorten it: with the turn, both direction columns are checked. Inside the unit
        // circle the clamp never acts, so a one-sided difference (extrapolated as above) sees
        // a smooth loss.
        let scaled = |delta: f32| {
            let mut v = base.clone();
            v[at(7)] = ux * (1.0 + delta);
            v[at(8)] = uy * (1.0 + delta);
            v
        };
        let inward = |h: f32| (loss(&base) - loss(&scaled(-h))) / h as f64;
        let numeric = 2.0 * inward(1e-2) - inward(2e-2);
        let analytic = (grad[at(7)] * ux + grad[at(8)] * uy) as f64;
        // Its gradients are small (0.004–0.05 here), so the bound is tighter than `check`'s.
        assert!(
            (numeric - analytic).abs() <= 1e-4 + 1e-2 * analytic.abs(),
            "site {site} direction length: finite difference {numeric}, analytic {analytic}"
        );
    }
}

#[test]
fn bad_render_inputs_are_rejected() {
    let device = device();
    let table = random_sites(10, 0, 12, 10, 7);
    let sites = table.to_tensor(10, &device);
    let candidates = exact(&table, &device);
    assert!(matches!(
        try_render(sites.clone().narrow(1, 0, 9), &candidates),
        Err(SadError::SitesShape(_))
    ));
    // A plane strategy on a device whose kernels have no plane sums is one typed error; the
    // reference render (no kernels) ignores the strategy.
    for strategy in [BackwardStrategy::PlaneScan, BackwardStrategy::PlaneBallot] {
        let result = try_render_with(sites.clone(), &candidates, strategy);
        if strategy.supported(&device) || !uses_fused_kernels(&device) {
            assert!(result.is_ok(), "{strategy}: {result:?}");
        } else {
            assert_eq!(result.unwrap_err(), SadError::UnsupportedStrategy(strategy));
        }
    }
    let no_size = SiteTable {
        width: 0,
        height: 0,
        sites: table.sites.clone(),
    };
    assert_eq!(
        render_sites(&no_size, &RenderOnlyOptions::default(), &device).unwrap_err(),
        SadError::NoSize
    );
    assert!(try_render(sites, &candidates).is_ok());
}

#[test]
fn sites_module_trains_with_a_stock_burn_optimizer() {
    use burn::module::Module;
    use burn::optim::{AdamConfig, GradientsParams};
    use burn_sad::sad::Sites;

    let device = device().autodiff();
    let target_table = read_sites(format!("{DATA}/astro128_sites.txt")).unwrap();
    let target = load_rgb(format!("{DATA}/astro128.png"), &device).unwrap();
    let target = target.reshape([3, 128, 128]);
    // Start from the fitted sites with their colours washed out, plus 16 spare slots.
    let mut start = target_table.clone();
    for site in &mut start.sites {
        site[4..7].copy_from_slice(&[0.5, 0.5, 0.5]);
    }
    let capacity = start.sites.len() + 16;
    let mut sites = Sites::from_table(&start, capacity, &device);
    assert_eq!(sites.capacity(), capacity);
    assert_eq!(sites.num_params(), capacity * 10);
    let round_trip = sites.to_table(128, 128);
    assert_eq!(round_trip.sites[..start.sites.len()], start.sites[..]);
    assert_eq!(round_trip.active(), start.sites.len());
    let live = sites.live_mask().int().sum().into_scalar::<i64>();
    assert_eq!(live as usize, start.sites.len());

    let geometry = RenderGeometry::new(128, 128);
    let candidates = Candidates::exact(&sites.packed(), geometry);
    let mut optimizer = AdamConfig::new().init();
    let mut first = None;
    let mut last = 0.0;
    for _ in 0..15 {
        let image = render(sites.packed(), &candidates);
        let loss = (image - target.clone()).powf_scalar(2.0).mean();
        last = values(loss.clone())[0];
        first.get_or_insert(last);
        let grads = GradientsParams::from_grads(loss.backward(), &sites);
        sites = optimizer.step(0.02, sites, grads);
    }
    let first = first.unwrap();
    assert!(last < 0.5 * first, "MSE {first} → {last}");
    // The spare slots stay inactive and untouched.
    let table = sites.to_table(128, 128);
    assert!(
        table.sites[start.sites.len()..]
            .iter()
            .all(|s| s == &burn_sad::sad::INACTIVE_SITE)
    );
}

#[test]
fn non_square_render_covers_every_pixel() {
    // One site per slot everywhere: every pixel must get its colour, whatever the aspect ratio.
    let device = device();
    for (width, height) in [(37, 29), (29, 37), (64, 16), (16, 64)] {
        let table = SiteTable {
            width,
            height,
            sites: vec![[3.0, 2.0, 5.0, 2.0, 0.25, 0.5, 0.75, 1.0, 0.0, 0.0]],
        };
        let sites = table.to_tensor(1, &device);
        let candidates = exact(&table, &device);
        let image = values(render(sites, &candidates));
        let plane = width * height;
        let black: Vec<(usize, usize)> = (0..plane)
            .filter(|&i| {
                image[i] != 0.25 || image[plane + i] != 0.5 || image[2 * plane + i] != 0.75
            })
            .map(|i| (i % width, i / width))
            .collect();
        assert!(
            black.is_empty(),
            "{width}x{height}: {} wrong pixels, first {:?}",
            black.len(),
            &black[..black.len().min(8)]
        );
    }
}
