//! Sites files and render-only mode: files written by the reference trainer render to its own
//! render-only PSNR (at their size and at another), round-trip byte for byte, and bad files
//! name the line; the training config file and the budget solver it feeds against the
//! reference's numbers. Run on the device of `$BURN_SAD_DEVICE`.

use crate::common;

use burn::tensor::{Int, Tensor};
use burn_sad::image::load_rgb;
use burn_sad::sad::fit::{FitError, Schedule, TrainingConfig, solve_target_bpp, target_sites};
use burn_sad::sad::{
    RenderOnlyOptions, SitesFileError, parse_sites, psnr, read_sites, render_sites, sites_to_string,
};
use common::{device, random_sites};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sad");

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
fn rendering_at_another_size_scales_positions_and_radii() {
    let device = device();
    let table = read_sites(format!("{DATA}/astro128_sites.txt")).unwrap();
    let target = load_rgb(format!("{DATA}/astro128.png"), &device).unwrap();
    let render = |size: usize, reference_scaling: bool| {
        let options = RenderOnlyOptions {
            width: Some(size),
            reference_scaling,
            ..RenderOnlyOptions::default()
        };
        let image = render_sites(&table, &options, &device).unwrap().image;
        assert_eq!(image.dims(), [3, size, size]);
        image
    };
    // Every other pixel of a 2× render samples the points the 128² render samples.
    let subsampled = |reference_scaling: bool| {
        let rows = Tensor::<1, Int>::arange_step(0..256, 2, &device);
        let image = render(256, reference_scaling)
            .select(1, rows.clone())
            .select(2, rows);
        psnr(image.unsqueeze::<4>(), target.clone())
    };
    // By default radii scale too: the same diagram, so close to the native render's 34.09 dB.
    let uniform = subsampled(false);
    // Positions only, as the reference: radii shrink relative to the image, cells change.
    let positions_only = subsampled(true);
    assert!(positions_only > 20.0, "{positions_only}");
    assert!(uniform > 33.0 && uniform > positions_only, "{uniform}");

    // At half the size, the default draws the same diagram: each pixel is the native render's
    // at twice its coordinates, and against the native render made smaller (2 × 2 means) it
    // stays far closer than positions alone, whose cells are twice as wide as they should be.
    let native = render(128, false);
    let even = Tensor::<1, Int>::arange_step(0..128, 2, &device);
    let sampled = native.clone().select(1, even.clone()).select(2, even);
    let half = render(64, false);
    let same_points = psnr(half.clone(), sampled.clone());
    let same_points_positions_only = psnr(render(64, true), sampled);
    assert!(
        same_points > SAME_DIAGRAM_PSNR && same_points > same_points_positions_only + 10.0,
        "half size at the native render's points: {same_points:.2} dB, positions only \
         {same_points_positions_only:.2} dB"
    );
    let smaller = native
        .reshape([3, 64, 2, 64, 2])
        .mean_dim(4)
        .mean_dim(2)
        .reshape([3, 64, 64]);
    let against_smaller = psnr(half, smaller.clone());
    let positions_only = psnr(render(64, true), smaller);
    assert!(
        against_smaller > positions_only + 3.0,
        "half size against the smaller native render: {against_smaller:.2} dB, positions only \
         {positions_only:.2} dB"
    );
}

/// A render at half the size against the native render at the same points: the same diagram,
/// but the candidate lists are built on a grid of half the cells, which misses a few of the
/// blends the native lists hold (38.2 dB on lavapipe).
const SAME_DIAGRAM_PSNR: f64 = 35.0;

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
fn budget_solver_reproduces_the_reference_numbers_for_kodak() {
    // Spec §5.5: 768×512, shipped config (128 000 sites, capacity 128 000, 4000 iterations).
    let config = TrainingConfig::default();
    let schedule = Schedule::new(&config, config.default_sites, 768, 512);
    for (bpp, sites, prune, final_sites) in [
        (0.2, 614, 0.071644, 614),
        (0.5, 1536, 0.059653, 1535),
        (1.0, 3072, 0.050521, 3072),
        (2.0, 6144, 0.041325, 6144),
        (16.276042, 50000, 0.012977, 50000),
    ] {
        let solution = solve_target_bpp(bpp, 768, 512, &schedule);
        assert_eq!(target_sites(bpp, 768, 512), sites);
        assert_eq!(solution.target_sites, sites, "bpp {bpp}");
        assert_eq!(solution.final_sites, final_sites, "bpp {bpp}");
        assert!(
            (solution.prune_rate - prune).abs() < 2e-6,
            "bpp {bpp}: prune rate {} vs {prune}",
            solution.prune_rate
        );
    }
}

#[test]
fn config_errors_name_the_key() {
    let error = |json: &str| match TrainingConfig::from_json(json) {
        Err(FitError::Config(message)) => message,
        other => panic!("{json}: expected a config error, got {other:?}"),
    };
    assert!(error(r#"{"PRUNE_PERCENTAGE": 0.1}"#).contains("PRUNE_PERCENTAGE"));
    assert!(error(r#"{"PRUNE_PERCENTILE": 1.5}"#).contains("PRUNE_PERCENTILE"));
    assert!(error(r#"{"BETA1": 1.0}"#).contains("BETA1"));
    assert!(error(r#"{"LR_POS_BASE": -1}"#).contains("LR_POS_BASE"));
    assert!(error(r#"{"DEFAULT_ITERS": "many"}"#).contains("invalid type"));
    assert!(error(r#"{"CAND_RADIUS_PROBES": 2}"#).contains("CAND_RADIUS_PROBES"));
    assert!(error("{").contains("EOF"));
    let shipped = std::fs::read_to_string(format!("{DATA}/training_config.json")).unwrap();
    assert_eq!(
        TrainingConfig::from_json(&shipped).unwrap(),
        TrainingConfig::default()
    );
    let partial = TrainingConfig::from_json(r#"{"DEFAULT_ITERS": 10}"#).unwrap();
    assert_eq!(partial.default_iters, 10);
    assert_eq!(partial.prune_freq, 40);
}
