//! Times `fused_ssim` training steps (forward + backward) and inference, in milliseconds, on
//! the selected device, next to Burn's plain-tensor reference and, optionally, another
//! implementation's times for the same shapes.
//!
//! ```text
//! cargo bench --bench fused_ssim -- [--quick] [--iters N] [--baseline FILE] [--no-reference]
//! ```
//! - `--quick`: small shapes, for CPU devices.
//! - `--baseline FILE`: lines `BxCxHxW train_ms infer_ms` (e.g. from `fused_ssim_baseline.py`
//!   on the same GPU); adds ratio columns (ours / theirs, below 1 means we are faster).
//! - Rows `l1ssim-…` time the fused `ssim_l1_loss` (λ = 0.2); their "reference" column is the
//!   unfused Burn L1 plus `fused_ssim`, and their baseline is fused-ssim plus a torch L1.
//! - Rows `BxCxDxHxW` time `fused_ssim3d` (baseline: fused-ssim's `fused_ssim3d`).
//! - Rows `msssim-…` time `ms_ssim` (5 scales, valid padding); their "reference" column is
//!   `ms_ssim_reference` and their baseline pytorch-msssim's `ms_ssim(X, Y, data_range=1)`.
//! - `--peaks TFLOPS,TBPS` (default an H200's: 67 TFLOP/s f32, 4.8 TB/s) sets the peaks the
//!   roofline lines after the table divide by: per 2D SSIM row, achieved flop/s and bytes/s of
//!   the train and infer steps, from a count per pixel and channel of 240 flop forward and 610
//!   forward + backward (the separable 11-tap window over five maps and the SSIM formula; the
//!   backward recomputes the forward, then filters three maps), and of the bytes that must move:
//!   both images read (8 B) to infer, both read twice and the gradient written (20 B) to train.
//! - `--only KEY` (repeatable) times just the rows with those keys (`1x3x2160x3840`,
//!   `l1ssim-…`), e.g. under a profiler.
//! - `--layout FR,FS,BR,BS` times the kernels under another `SsimLayout` (forward rows and
//!   strips, backward rows and strips; `benches/gpu/ssim_layouts.sh` sweeps several).
//! - `--dtype f16|bf16` times the ops on inputs of that dtype (the kernels read them and compute
//!   in f32), and after the table prints, for each photo pair of `tests/data`, how far the
//!   value on the inputs rounded to that dtype is from the f32 value.
//! - `--memory store|store-half|recompute` times the training steps under that `SsimMemory`
//!   mode. After the table, one line per 2D SSIM row gives the device memory a training forward
//!   holds until its backward under each mode (the memory pool's bytes in use, where the device
//!   reports them), with each mode's train time.
//! - `--dispatch` prints under each row the host's time per step until it had queued every
//!   step (before the closing device synchronisation): near the step's time, the host bounds
//!   the step, not the device.
//! - The device comes from `$BURN_SAD_DEVICE` (default: the best available).
//!
//! Times are synchronised wall time: warm-up, then `iters` back-to-back steps, then a device
//! sync, divided by `iters`.

mod common;

use std::collections::HashMap;

use burn::tensor::{DType, Device, Distribution, Tensor};
use burn_sad::device::{DeviceChoice, select_device};
use burn_sad::image::load_rgb;
use burn_sad::ssim::{
    MsSsimOptions, SsimLayout, SsimMemory, SsimOptions, fused_ssim, fused_ssim3d, ms_ssim,
    ms_ssim_reference, ssim_l1_loss, ssim_reference, ssim3d_reference,
};
use common::{baseline_cells, last_dispatch_ms, time_ms};

const GPU_SHAPES: [[usize; 4]; 4] = [
    [1, 3, 1080, 1920],
    [1, 3, 2160, 3840],
    [5, 1, 1024, 1024],
    [8, 3, 256, 256],
];
const QUICK_SHAPES: [[usize; 4]; 2] = [[1, 3, 256, 256], [2, 3, 128, 192]];

type SsimFn<const D: usize> = fn(Tensor<D>, Tensor<D>, SsimOptions) -> Tensor<1>;

/// Volumes of the 3D rows (fused-ssim's 3D test shape and a large one).
const GPU_VOLUMES: [[usize; 5]; 2] = [[2, 3, 96, 96, 96], [1, 1, 256, 256, 256]];
const QUICK_VOLUMES: [[usize; 5]; 1] = [[1, 1, 24, 40, 36]];

/// Shapes of the fused L1+SSIM rows (the 3DGS loss, λ = 0.2).
const L1_SHAPES: [[usize; 4]; 2] = [[1, 3, 1080, 1920], [1, 3, 2160, 3840]];
const LAMBDA: f32 = 0.2;

/// Shapes of the MS-SSIM rows (pytorch-msssim's 5 scales need a side over 160).
const MS_SHAPES: [[usize; 4]; 2] = [[1, 3, 1080, 1920], [8, 3, 256, 256]];

/// Flop per pixel and channel of the 2D SSIM forward, and of forward + backward (see above).
const FLOP_INFER: f64 = 240.0;
const FLOP_TRAIN: f64 = 610.0;
/// Bytes per pixel and channel that must move (see above).
const BYTES_INFER: f64 = 8.0;
const BYTES_TRAIN: f64 = 20.0;

/// `ms_ssim` with its defaults, as an [`SsimFn`] (the SSIM options are not its own).
fn ms_ssim_default(img1: Tensor<4>, img2: Tensor<4>, _: SsimOptions) -> Tensor<1> {
    ms_ssim(img1, img2, &MsSsimOptions::default())
}

/// `ms_ssim_reference` with its defaults, as an [`SsimFn`].
fn ms_ssim_reference_default(img1: Tensor<4>, img2: Tensor<4>, _: SsimOptions) -> Tensor<1> {
    ms_ssim_reference(img1, img2, &MsSsimOptions::default())
}

/// 1 − the loss, so that `train_ms` (which differentiates 1 − op) times the loss itself.
fn one_minus_l1_ssim(pred: Tensor<4>, gt: Tensor<4>, options: SsimOptions) -> Tensor<1> {
    ssim_l1_loss(pred, gt, LAMBDA, options)
        .neg()
        .add_scalar(1.0)
}

/// The unfused equivalent: Burn's L1 plus the fused SSIM, as two ops.
fn one_minus_l1_plus_ssim(pred: Tensor<4>, gt: Tensor<4>, options: SsimOptions) -> Tensor<1> {
    let l1 = (pred.clone() - gt.clone())
        .abs()
        .mean()
        .mul_scalar(1.0 - LAMBDA);
    let ssim = fused_ssim(pred, gt, options)
        .neg()
        .add_scalar(1.0)
        .mul_scalar(LAMBDA);
    (l1 + ssim).neg().add_scalar(1.0)
}

struct Args {
    quick: bool,
    iters: usize,
    baseline: Option<String>,
    reference: bool,
    /// The rows to time (their keys); all when empty.
    only: Vec<String>,
    /// Peak f32 flop/s (in TFLOP/s) and memory bandwidth (TB/s) of the roofline lines.
    peaks: (f64, f64),
    /// The options every timed op takes (the kernels' layout).
    options: SsimOptions,
    /// The inputs' dtype.
    dtype: DType,
    /// Print the host's dispatch time per step under each row.
    dispatch: bool,
}

fn parse_args() -> Args {
    let mut args = Args {
        quick: false,
        iters: 50,
        baseline: None,
        reference: true,
        only: Vec::new(),
        peaks: (67.0, 4.8),
        options: SsimOptions::default(),
        dtype: DType::F32,
        dispatch: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => args.quick = true,
            "--no-reference" => args.reference = false,
            "--dispatch" => args.dispatch = true,
            "--iters" => args.iters = it.next().and_then(|v| v.parse().ok()).expect("--iters N"),
            "--baseline" => args.baseline = it.next(),
            "--only" => args.only.extend(it.next()),
            "--layout" => {
                let layout: SsimLayout = it
                    .next()
                    .unwrap_or_default()
                    .parse()
                    .unwrap_or_else(|error| panic!("--layout: {error}"));
                args.options = args.options.with_layout(layout);
            }
            "--dtype" => {
                args.dtype = match it.next().as_deref() {
                    Some("f32") => DType::F32,
                    Some("f16") => DType::F16,
                    Some("bf16") => DType::BF16,
                    other => panic!("--dtype f32|f16|bf16, got {other:?}"),
                };
            }
            "--memory" => {
                let memory: SsimMemory = it
                    .next()
                    .unwrap_or_default()
                    .parse()
                    .unwrap_or_else(|error| panic!("--memory: {error}"));
                args.options = args.options.with_memory(memory);
            }
            "--peaks" => {
                let value = it.next().unwrap_or_default();
                let (flops, bytes) = value.split_once(',').expect("--peaks TFLOPS,TBPS");
                args.peaks = (flops.parse().expect("TFLOPS"), bytes.parse().expect("TBPS"));
            }
            // `cargo bench` passes `--bench`.
            _ => {}
        }
    }
    args
}

fn label(shape: &[usize]) -> String {
    shape
        .iter()
        .map(|side| side.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

fn read_baseline(path: &str) -> HashMap<String, (f64, f64)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            (
                f[0].to_string(),
                (f[1].parse().unwrap(), f[2].parse().unwrap()),
            )
        })
        .collect()
}

fn train_ms<const D: usize>(
    op: SsimFn<D>,
    img1: &Tensor<D>,
    img2: &Tensor<D>,
    (iters, options): (usize, SsimOptions),
) -> f64 {
    let device = img1.device();
    let target = Tensor::<D>::from_inner(img2.clone());
    let pred = Tensor::<D>::from_inner(img1.clone());
    time_ms(&device, iters, || {
        let param = pred.clone().require_grad();
        let loss = op(param.clone(), target.clone(), options)
            .neg()
            .add_scalar(1.0);
        let grads = loss.backward();
        let grad = param.grad(&grads).expect("gradient");
        drop(grad);
    })
}

fn infer_ms<const D: usize>(
    op: SsimFn<D>,
    img1: &Tensor<D>,
    img2: &Tensor<D>,
    (iters, options): (usize, SsimOptions),
) -> f64 {
    let device = img1.device();
    time_ms(&device, iters, || {
        drop(op(img1.clone(), img2.clone(), options));
    })
}

fn main() {
    let args = parse_args();
    let choice = DeviceChoice::from_env().expect("valid BURN_SAD_DEVICE");
    let (device, description) = select_device(choice).expect("device");
    println!("device: {description}");
    let baseline = args.baseline.as_deref().map(read_baseline);
    let shapes: Vec<[usize; 4]> = if args.quick {
        QUICK_SHAPES.to_vec()
    } else {
        GPU_SHAPES.to_vec()
    };
    println!(
        "| shape | train ms | infer ms | reference train ms | reference infer ms | baseline train ms | baseline infer ms | train ratio | infer ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    // (row key, shape, op, its reference): plain SSIM, then on GPUs L1+SSIM and MS-SSIM.
    let family =
        |prefix: &'static str, shapes: &[[usize; 4]], op: SsimFn<4>, reference: SsimFn<4>| {
            shapes
                .iter()
                .map(move |&shape| (format!("{prefix}{}", label(&shape)), shape, op, reference))
                .collect::<Vec<_>>()
        };
    let mut rows = family("", &shapes, fused_ssim, ssim_reference);
    if !args.quick {
        rows.extend(family(
            "l1ssim-",
            &L1_SHAPES,
            one_minus_l1_ssim,
            one_minus_l1_plus_ssim,
        ));
        rows.extend(family(
            "msssim-",
            &MS_SHAPES,
            ms_ssim_default,
            ms_ssim_reference_default,
        ));
    }
    let mut roofline = Vec::new();
    let mut dispatch = Vec::new();
    let wanted = |key: &str| args.only.is_empty() || args.only.iter().any(|only| only == key);
    for (key, shape, op, reference_op) in rows {
        if !wanted(&key) {
            continue;
        }
        let (train, infer) = bench_row(
            &key,
            shape,
            (op, reference_op),
            &args,
            baseline.as_ref(),
            &device,
            &mut dispatch,
        );
        if key == label(&shape) {
            roofline.push(roofline_line(&key, shape, train, infer, args.peaks));
        }
    }
    let volumes: &[[usize; 5]] = if args.quick {
        &QUICK_VOLUMES
    } else {
        &GPU_VOLUMES
    };
    for &shape in volumes {
        let key = label(&shape);
        if !wanted(&key) {
            continue;
        }
        let (op, reference_op) = (fused_ssim3d as SsimFn<5>, ssim3d_reference as SsimFn<5>);
        bench_row(
            &key,
            shape,
            (op, reference_op),
            &args,
            baseline.as_ref(),
            &device,
            &mut dispatch,
        );
    }
    println!();
    for line in roofline {
        println!("{line}");
    }
    if args.dispatch {
        println!();
        for line in dispatch {
            println!("{line}");
        }
    }
    if args.dtype != DType::F32 {
        println!();
        for line in dtype_lines(args.dtype, args.options, &device) {
            println!("{line}");
        }
    }
    println!();
    for shape in &shapes {
        if wanted(&label(shape)) {
            println!("{}", memory_line(shape, args.iters, args.options, &device));
        }
    }
}

/// For each photo pair of `tests/data`: SSIM of the pair rounded to `dtype` minus SSIM of the
/// f32 pair, both from the fused kernels.
fn dtype_lines(dtype: DType, options: SsimOptions, device: &Device) -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    ["astronaut", "chelsea", "coffee"]
        .iter()
        .map(|name| {
            let load = |file: String| load_rgb(format!("{dir}/{file}.png"), device).expect("photo");
            let (a, b) = (load(name.to_string()), load(format!("{name}_degraded")));
            let dims = a.dims();
            let value = |t: Tensor<1>| f64::from(t.into_scalar::<f32>());
            let exact = value(fused_ssim(a.clone(), b.clone(), options));
            let rounded = value(fused_ssim(a.cast(dtype), b.cast(dtype), options));
            format!(
                "{dtype:?} {name} {dims:?}: SSIM {rounded:.7} against f32 {exact:.7}, difference {:+.2e}",
                rounded - exact
            )
        })
        .collect()
}

/// Device memory a training forward of `fused_ssim` holds until its backward, and the train
/// time, under each [`SsimMemory`] mode.
fn memory_line(shape: &[usize; 4], iters: usize, options: SsimOptions, device: &Device) -> String {
    let img1 = Tensor::<4>::random(*shape, Distribution::Default, device);
    let img2 = Tensor::<4>::random(*shape, Distribution::Default, device);
    let ad = device.clone().autodiff();
    let in_use = || device.memory_pool_usage().map(|usage| usage.bytes_in_use);
    let mut cells = Vec::new();
    for memory in [
        SsimMemory::Store,
        SsimMemory::StoreHalf,
        SsimMemory::Recompute,
    ] {
        let options = options.with_memory(memory);
        let held = || {
            let x = Tensor::<4>::from_data(img1.to_data(), &ad).require_grad();
            let y = Tensor::<4>::from_data(img2.to_data(), &ad);
            let before = in_use()?;
            let loss = fused_ssim(x, y, options);
            loss.clone().into_data();
            let after = in_use()?;
            drop(loss.backward());
            Some(after.saturating_sub(before))
        };
        held();
        let held = held().map_or("not reported".into(), |bytes| {
            format!("{:.1} MB", bytes as f64 / 1e6)
        });
        let ms = train_ms(fused_ssim, &img1, &img2, (iters, options));
        cells.push(format!("{memory:?} {held} held, train {ms:.3} ms"));
    }
    format!("memory {}: {}", label(shape), cells.join("; "))
}

/// Achieved flop/s and bytes/s of a 2D SSIM row's train and infer steps (ms), against `peaks`.
fn roofline_line(
    key: &str,
    shape: [usize; 4],
    train: f64,
    infer: f64,
    peaks: (f64, f64),
) -> String {
    let values = shape.iter().product::<usize>() as f64;
    let rate = |per_value: f64, ms: f64| per_value * values / (ms * 1e-3);
    let part = |flop: f64, bytes: f64, ms: f64| {
        let (flops, bps) = (rate(flop, ms) / 1e12, rate(bytes, ms) / 1e12);
        format!(
            "{flops:.1} TFLOP/s ({:.0} % of peak), {bps:.2} TB/s ({:.0} %)",
            100.0 * flops / peaks.0,
            100.0 * bps / peaks.1
        )
    };
    format!(
        "roofline {key}: train {}; infer {}",
        part(FLOP_TRAIN, BYTES_TRAIN, train),
        part(FLOP_INFER, BYTES_INFER, infer)
    )
}

/// Times one row and prints it; returns our train and infer ms, and adds the row's dispatch
/// line to `dispatch`.
fn bench_row<const D: usize>(
    key: &str,
    shape: [usize; D],
    (op, reference_op): (SsimFn<D>, SsimFn<D>),
    args: &Args,
    baseline: Option<&HashMap<String, (f64, f64)>>,
    device: &Device,
    dispatch: &mut Vec<String>,
) -> (f64, f64) {
    let img1 = Tensor::<D>::random(shape, Distribution::Default, device);
    let img2 = (img1.clone() * 0.8
        + Tensor::<D>::random(shape, Distribution::Default, device) * 0.2)
        .clamp(0.0, 1.0);
    let (img1, img2) = (img1.cast(args.dtype), img2.cast(args.dtype));
    let train = train_ms(op, &img1, &img2, (args.iters, args.options));
    let train_dispatch = last_dispatch_ms();
    let infer = infer_ms(op, &img1, &img2, (args.iters, args.options));
    let infer_dispatch = last_dispatch_ms();
    let (ref_train, ref_infer) = if args.reference {
        let iters = (args.iters / 5).max(3);
        (
            format!(
                "{:.3}",
                train_ms(reference_op, &img1, &img2, (iters, args.options))
            ),
            format!(
                "{:.3}",
                infer_ms(reference_op, &img1, &img2, (iters, args.options))
            ),
        )
    } else {
        ("-".into(), "-".into())
    };
    let [base_train, base_infer, ratio_train, ratio_infer] =
        baseline_cells((train, infer), baseline.and_then(|b| b.get(key).copied()));
    println!(
        "| {key} | {train:.3} | {infer:.3} | {ref_train} | {ref_infer} | {base_train} | {base_infer} | {ratio_train} | {ratio_infer} |"
    );
    dispatch.push(format!(
        "dispatch {key}: train {train_dispatch:.3} of {train:.3} ms, infer {infer_dispatch:.3} of {infer:.3} ms"
    ));
    (train, infer)
}
