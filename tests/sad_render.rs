//! The SAD render op against its plain-tensor reference (forward and all 10 gradients), finite
//! differences, candidate lists against brute force, sites files written by the reference
//! trainer, and bad files. Run on the device of `$BURN_SAD_DEVICE`.

mod common;

use burn::tensor::{Device, Distribution, Int, Tensor, TensorData};
use burn_sad::image::load_rgb;
use burn_sad::sad::{
    Candidates, HilbertOrder, PropagationOptions, RenderGeometry, RenderOnlyOptions,
    RenderReadySites, SadError, SiteTable, SitesFileError, exact_candidates, f16_bits, f16_to_f32,
    pack_sites_reference, parse_sites, psnr, ranking_view, read_sites, render, render_ready,
    render_reference, render_sites, sites_to_string, try_render,
};
use burn_sad::ssim::uses_fused_kernels;
use burn_sad_kernels::sad::{PACKED_WORDS, RANK_SQUEEZE, RANK_STRETCH, RANK_TAU};
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
    }
}

/// Fraction of cells whose list holds exactly the brute-force top 8 (as sets), ranked as the
/// propagation ranks: from the sites' half-precision copy.
fn exact_fraction(candidates: &Candidates, table: &SiteTable) -> f64 {
    let got = values_int(candidates.ids());
    let view: Vec<_> = table.sites.iter().map(ranking_view).collect();
    let want = exact_candidates(&view, geometry(table));
    let cells = want.len() / 8;
    let matching = (0..cells)
        .filter(|c| {
            let mut a = got[c * 8..c * 8 + 8].to_vec();
            let mut b = want[c * 8..c * 8 + 8].to_vec();
            a.sort();
            b.sort();
            a == b
        })
        .count();
    matching as f64 / cells as f64
}

fn values_int(tensor: Tensor<2, Int>) -> Vec<i32> {
    tensor
        .try_to_vec_as::<i64>()
        .expect("readable ids")
        .into_iter()
        .map(|v| v as i32)
        .collect()
}

#[test]
fn propagation_finds_the_true_top_8() {
    let device = device();
    if !uses_fused_kernels(&device) {
        return; // Without CubeCL kernels the lists are the exact ones by construction.
    }
    let table = random_sites(700, 30, 67, 45, 5);
    let sites = table.to_tensor(table.sites.len(), &device);
    let geometry = geometry(&table);
    // Render-only: flood, then the reference's 16 passes.
    let flooded = Candidates::for_render(&sites, geometry, 16, PropagationOptions::default());
    // Not all 100 %: near ties of the 8th and 9th site rank either way under the device's exp
    // and square root (CUDA's are approximate). The reference's lists are no closer.
    let fraction = exact_fraction(&flooded, &table);
    assert!(fraction >= 0.98, "flood + 16 passes: {fraction}");
    // Training: random lists, then passes.
    let hilbert = HilbertOrder::of(&table, 67, 45, &device);
    let mut candidates = Candidates::random(&sites, geometry, 0);
    for _ in 0..24 {
        candidates.propagate(&sites, &hilbert, PropagationOptions::default());
    }
    let fraction = exact_fraction(&candidates, &table);
    assert!(fraction >= 0.98, "random + 24 passes: {fraction}");
}

#[test]
fn the_ranking_copy_rounds_like_the_host() {
    let device = device();
    let mut table = random_sites(300, 20, 3000, 2000, 9);
    // Values that round up, down, to even, out of range, to subnormals, and non-finite ones.
    let specials = [
        2049.0, 2051.0, 4097.0, 65519.0, 65520.0, 1e6, 1e-5, 3e-7, 2.9e-8, -0.0, -2.5, 0.1,
        1.0009766, 1.0004883, 1.0014648,
    ];
    for (i, &value) in specials.iter().enumerate() {
        let site = &mut table.sites[i];
        site[2] = value;
        site[3] = -value;
        site[7] = value;
        site[9] = value * 0.5;
    }
    table.sites[20][2] = f32::NAN;
    table.sites[21][9] = f32::INFINITY;
    let sites = table.to_tensor(table.sites.len(), &device);
    let got: Vec<u32> = Candidates::packed(&sites)
        .try_to_vec_as::<i64>()
        .expect("readable words")
        .into_iter()
        .map(|word| word as u32)
        .collect();
    let expected = pack_sites_reference(&table.sites);
    assert_eq!(got.len(), expected.len());
    // Words 0–3 and 6 are f16-rounded inputs: the same bits as the host's rounding. Words 4, 5
    // and 7 (e^a, 1/e^a, τ) are the device's exponentials of those: within a few ulps.
    // An input that rounds to an f16 infinity or NaN comes out of the device at 2^16 or more.
    // The exponentials of such a value are not compared (the host's f16 NaN is the device's
    // 98 304).
    let derived = [RANK_STRETCH, RANK_SQUEEZE, RANK_TAU];
    for (index, (&got, &expected)) in got.iter().zip(&expected).enumerate() {
        let (site, word) = (index / PACKED_WORDS, index % PACKED_WORDS);
        let (got, expected) = (f32::from_bits(got), f32::from_bits(expected));
        let context = format!("site {site} word {word}: {got} against the host's {expected}");
        let finite_inputs = ranking_view(&table.sites[site])
            .iter()
            .all(|v| v.is_finite());
        if !expected.is_finite() {
            assert!(!got.is_finite() || got.abs() >= 65536.0, "{context}");
        } else if derived.contains(&word) {
            if !finite_inputs {
                continue;
            }
            assert!((got - expected).abs() <= 1e-6 * expected.abs(), "{context}");
        } else if expected.abs() < 2f32.powi(-14) && got == 0.0 {
            // An f16 subnormal, flushed to zero by a runtime without f32 subnormals.
        } else {
            assert_eq!(got.to_bits(), expected.to_bits(), "{context}");
        }
    }
    // Spot checks of the host rounding itself.
    assert_eq!(f16_bits(1.0), 0x3c00);
    assert_eq!(f16_bits(65504.0), 0x7bff);
    assert_eq!(f16_bits(65520.0), 0x7c00);
    assert_eq!(f16_bits(1.0 + 1.0 / 2048.0), 0x3c00, "a tie goes to even");
    assert_eq!(f16_bits(1.0 + 3.0 / 2048.0), 0x3c02, "a tie goes to even");
    assert_eq!(f16_bits(2f32.powi(-24)), 0x0001);
    assert_eq!(f16_to_f32(f16_bits(2051.0)), 2052.0);
    assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
}

#[test]
fn reference_sites_files_render_like_the_reference() {
    let device = device();
    // The reference's render-only mode printed these (see tests/data/sad/README.md).
    for (name, reference_psnr) in [("astro128", 34.09), ("cat160x96", 42.09)] {
        let table = read_sites(format!("{DATA}/{name}_sites.txt")).unwrap();
        let rendered = render_sites(&table, &RenderOnlyOptions::default(), &device).unwrap();
        let target = load_rgb(format!("{DATA}/{name}.png"), &device).unwrap();
        let [_, c, h, w] = target.dims();
        let ours = psnr(rendered.image, target.reshape([c, h, w]));
        // The reference prints two decimals.
        assert!(
            (ours - reference_psnr).abs() <= 0.05 + 0.005,
            "{name}: {ours:.3} dB vs the reference's {reference_psnr} dB"
        );
    }
}

#[test]
fn rendering_at_another_size_scales_positions() {
    let device = device();
    let table = read_sites(format!("{DATA}/astro128_sites.txt")).unwrap();
    let target = load_rgb(format!("{DATA}/astro128.png"), &device).unwrap();
    // Every other pixel of a 2× render samples the points the 128² render samples.
    let subsampled = |scale_radius: bool| {
        let options = RenderOnlyOptions {
            width: Some(256),
            scale_radius,
            ..RenderOnlyOptions::default()
        };
        let image = render_sites(&table, &options, &device).unwrap().image;
        assert_eq!(image.dims(), [3, 256, 256]);
        let rows = Tensor::<1, Int>::arange_step(0..256, 2, &device);
        let image = image.select(1, rows.clone()).select(2, rows);
        psnr(image.unsqueeze::<4>(), target.clone())
    };
    // Positions only, as the reference: radii shrink relative to the image, cells change.
    let positions_only = subsampled(false);
    assert!(positions_only > 20.0, "{positions_only}");
    // Radii too: the same diagram, so close to the native render's 34.09 dB.
    let uniform = subsampled(true);
    assert!(uniform > 33.0 && uniform > positions_only, "{uniform}");
}

#[test]
fn sites_files_round_trip_byte_for_byte() {
    for name in ["astro128", "cat160x96"] {
        let text = std::fs::read_to_string(format!("{DATA}/{name}_sites.txt")).unwrap();
        let table = parse_sites(&text).unwrap();
        assert_eq!(
            sites_to_string(&table),
            text,
            "{name}: written differs from read"
        );
        assert_eq!(parse_sites(&sites_to_string(&table)).unwrap(), table);
    }
    // Random values, including tiny and negative ones, survive exactly.
    let table = random_sites(50, 3, 99, 77, 6);
    let mut live = table.clone();
    live.sites.retain(|s| s[0] >= 0.0);
    live.sites[0][9] = -3.1e-7;
    // The largest radius a file may hold (larger ones overflow the render), in `e+09` style.
    live.sites[1][3] = 1.0e9;
    assert_eq!(parse_sites(&sites_to_string(&live)).unwrap(), live);
    // Writing skips inactive slots.
    assert_eq!(
        parse_sites(&sites_to_string(&table)).unwrap().sites.len(),
        50
    );
}

#[test]
fn bad_sites_files_name_the_line() {
    let header = "# SAD Sites (position_x, ...)\n# Image size: 8 8\n";
    let good = "1 2 0.5 0.5 0.5 5 3 1 0 0\n";
    let cases: [(String, usize, &str); 7] = [
        (format!("{header}{good}1 2 3\n"), 4, "expected 10"),
        (
            format!("{header}{good}1 2 0.5 0.5 0.5 NaN 3 1 0 0\n"),
            4,
            "not finite",
        ),
        (
            format!("{header}1 2 0.5 0.5 0.5 5 -3 1 0 0\n"),
            3,
            "negative radius",
        ),
        (
            format!("{header}1 2 0.5 x 0.5 5 3 1 0 0\n"),
            3,
            "not a number",
        ),
        (format!("# Image size: 8 -8\n{good}"), 1, "positive"),
        (format!("# Image size: 8\n{good}"), 1, "Image size"),
        (format!("{header}# Total sites: 2\n{good}"), 3, "truncated"),
    ];
    for (text, line, fragment) in cases {
        match parse_sites(&text) {
            Err(SitesFileError::Line { line: got, reason }) => {
                assert_eq!(got, line, "{text:?}: {reason}");
                assert!(reason.contains(fragment), "{reason} lacks {fragment}");
            }
            other => panic!("{text:?}: expected a line error, got {other:?}"),
        }
    }
    assert_eq!(parse_sites(header), Err(SitesFileError::NoSites));
    // The legacy 7-column form loads with direction (1, 0) and no anisotropy.
    let legacy = parse_sites(&format!("{header}1 2 0.5 0.5 0.5 5 3\n")).unwrap();
    assert_eq!(legacy.sites[0][7..], [1.0, 0.0, 0.0]);
    assert!(matches!(
        read_sites("/nonexistent/x_sites.txt"),
        Err(SitesFileError::Io(_))
    ));
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
