//! Times the SAD render op on the selected device: candidate build (record packing, jump flood
//! and 16 propagation passes, as `sad render` builds and the reference's render-only mode times
//! it, Hilbert order excluded), render forward from the packed records, and forward + backward
//! of the differentiable op, in milliseconds (wall time between synchronisations), for
//! synthetic site sets.
//!
//! ```text
//! cargo bench --bench sad_render -- [--quick] [--iters N] [--write-sites DIR] [--baseline FILE]
//! ```
//! - `--quick`: small sizes, for CPU devices.
//! - `--write-sites DIR`: also writes each site set as `DIR/<side>_<sites>_sites.txt`, so the
//!   reference trainer can render the very same sites (`sad_cuda --render FILE`).
//! - `--baseline FILE`: lines `<side> <sites> <candidate_ms> <render_ms>` (the reference's
//!   `Candidate build:` and `Render:` times for those files); adds ratio columns (ours / theirs).
//! - The device comes from `$BURN_SAD_DEVICE` (default: the best available).
//!
//! Site sets are deterministic: positions uniform over the image, parameters in the ranges a fit
//! produces (log τ 5.5–7.5, radius 1–4 px, random colours, directions and log anisotropy in ±1).

mod common;

use std::collections::HashMap;

use burn::tensor::{Distribution, Tensor};
use burn_sad::device::{DeviceChoice, select_device};
use burn_sad::sad::{
    Candidates, HilbertOrder, PropagationOptions, RenderGeometry, RenderReadySites, SiteTable,
    render, render_ready, write_sites,
};
use common::{baseline_cells, time_ms};

const GPU_CASES: [(usize, usize); 6] = [
    (512, 32_768),
    (512, 131_072),
    (1024, 32_768),
    (1024, 131_072),
    (2048, 32_768),
    (2048, 131_072),
];
const QUICK_CASES: [(usize, usize); 2] = [(128, 2_048), (256, 8_192)];

struct Args {
    quick: bool,
    iters: usize,
    write_sites: Option<String>,
    baseline: Option<String>,
}

fn parse_args() -> Args {
    let mut args = Args {
        quick: false,
        iters: 20,
        write_sites: None,
        baseline: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => args.quick = true,
            "--iters" => args.iters = it.next().and_then(|v| v.parse().ok()).expect("--iters N"),
            "--write-sites" => args.write_sites = Some(it.next().expect("--write-sites DIR")),
            "--baseline" => args.baseline = Some(it.next().expect("--baseline FILE")),
            // Cargo's bench harness flag.
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    args
}

/// A deterministic synthetic site set.
fn synthetic_sites(side: usize, count: usize) -> SiteTable {
    let mut state = (side as u64) << 32 | count as u64 | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let sites = (0..count)
        .map(|_| {
            let angle = next() * std::f32::consts::TAU;
            [
                next() * (side - 1) as f32,
                next() * (side - 1) as f32,
                5.5 + 2.0 * next(),
                1.0 + 3.0 * next(),
                next(),
                next(),
                next(),
                angle.cos(),
                angle.sin(),
                2.0 * next() - 1.0,
            ]
        })
        .collect();
    SiteTable {
        width: side,
        height: side,
        sites,
    }
}

fn read_baseline(path: &str) -> HashMap<(usize, usize), (f64, f64)> {
    std::fs::read_to_string(path)
        .expect("baseline file")
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            Some((
                (f.first()?.parse().ok()?, f.get(1)?.parse().ok()?),
                (f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?),
            ))
        })
        .collect()
}

fn main() {
    let args = parse_args();
    let choice = DeviceChoice::from_env().expect("valid BURN_SAD_DEVICE");
    let (device, description) = select_device(choice).expect("device");
    println!("device: {description}");
    let baseline = args.baseline.as_deref().map(read_baseline);
    let cases: &[(usize, usize)] = if args.quick { &QUICK_CASES } else { &GPU_CASES };
    println!(
        "| image | sites | candidate build ms | render ms | render + backward ms | reference candidate build ms | reference render ms | candidate ratio | render ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for &(side, count) in cases {
        let table = synthetic_sites(side, count);
        if let Some(dir) = &args.write_sites {
            write_sites(format!("{dir}/{side}_{count}_sites.txt"), &table).expect("writable dir");
        }
        let sites = table.to_tensor(count, &device);
        let geometry = RenderGeometry::new(side, side);
        let options = PropagationOptions::default();
        // As the reference times it: the Hilbert order is built outside, the timed part is the
        // jump flood and the 16 propagation passes.
        let hilbert = HilbertOrder::of(&table, side, side, &device);
        let mut built = None;
        // As `sad render` builds: the records the renders read are packed in the build.
        let build = time_ms(&device, args.iters.div_ceil(4).max(2), || {
            let ready = RenderReadySites::new(sites.clone());
            let candidates =
                Candidates::flood_and_propagate(&ready, geometry, &hilbert, 16, options, |_| {
                    Ok::<(), std::convert::Infallible>(())
                });
            built = candidates.ok().map(|candidates| (ready, candidates));
        });
        let (ready, candidates) = built.expect("built");
        let forward = time_ms(&device, args.iters, || {
            drop(render_ready(&ready, &candidates));
        });
        let ad = device.clone().autodiff();
        let tracked = Tensor::<2>::from_data(sites.to_data(), &ad);
        let upstream = Tensor::<3>::random([3, side, side], Distribution::Default, &ad);
        let ad_candidates =
            Candidates::from_ids(Tensor::from_data(candidates.ids().to_data(), &ad), geometry);
        let backward = time_ms(&device, args.iters, || {
            let param = tracked.clone().require_grad();
            let image = render(param.clone(), &ad_candidates);
            let grads = (image * upstream.clone()).sum().backward();
            drop(param.grad(&grads).expect("gradient"));
        });
        let [ref_build, ref_render, build_ratio, render_ratio] = baseline_cells(
            (build, forward),
            baseline
                .as_ref()
                .and_then(|b| b.get(&(side, count)).copied()),
        );
        println!(
            "| {side}² | {count} | {build:.3} | {forward:.3} | {backward:.3} | {ref_build} | {ref_render} | {build_ratio} | {render_ratio} |"
        );
    }
}
