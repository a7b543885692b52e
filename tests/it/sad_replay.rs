//! Steady iterations replayed from a recorded device graph (`FitOptions::replay`) against the
//! same iterations run op by op: the same sites, the clock of λ and the bias corrections moving
//! with the iterations, and snapshots and clones that later replays leave alone.

use crate::common;

use burn::tensor::Device;
use burn_sad::image::load_rgb;
use burn_sad::sad::fit::capture_gate::DeviceShare;
use burn_sad::sad::fit::{FitOptions, TargetImage, Trainer, TrainingConfig};
use burn_sad::ssim::uses_fused_kernels;
use common::{DATA, assert_close, device, values};

/// A fit with no densify or prune, so that it is steady but for its candidate updates (every
/// 8th iteration).
fn trainer(replay: bool, iters: usize, device: &Device) -> Trainer {
    let image = load_rgb(format!("{DATA}/sad/astro64.png"), device).expect("fixture");
    let target = TargetImage::from_tensor(image.slice([0..1, 0..3, 5..52, 3..58]));
    let config = TrainingConfig {
        default_iters: iters,
        default_sites: 260,
        default_max_sites: 260,
        default_target_bpp: 0.0,
        prune_start: iters + 1,
        prune_end: iters + 1,
        densify_start: iters + 1,
        densify_end: iters + 1,
        ..TrainingConfig::default()
    };
    let options = FitOptions {
        replay,
        log_every: 10,
        ..FitOptions::new(config)
    };
    Trainer::new(target, options, device).expect("trainer")
}

/// Whether this device records graphs (CubeCL without fusion), so that replays must happen.
fn replays_here(device: &Device) -> bool {
    uses_fused_kernels(device) && !cfg!(feature = "fusion")
}

#[test]
fn replayed_iterations_step_as_the_op_by_op_ones() {
    let device = device();
    let iters = 30;
    let mut replayed = trainer(true, iters, &device);
    let mut plain = trainer(false, iters, &device);
    for it in 0..iters {
        let (a, b) = (replayed.step(), plain.step());
        assert_eq!(a.is_some(), b.is_some(), "iteration {it} measures in both");
        if let (Some(a), Some(b)) = (a, b) {
            assert!((a - b).abs() < 0.02, "iteration {it}: PSNR {a} against {b}");
        }
        // Float atomics sum in any order, so the two may differ in the last bits, and grow
        // apart slowly; a clock row off by one moves positions by a hundredth of a pixel.
        let (got, want) = (values(replayed.sites()), values(plain.sites()));
        assert_close(
            &got,
            &want,
            2e-4,
            2e-4,
            &format!("sites after iteration {it}"),
        );
    }
    assert_eq!(plain.replayed_iterations(), 0);
    if replays_here(&device) {
        // All but the updates at 0, 8, 16 and 24 (each finds the diffusion's neighbours over
        // the new lists, which the next iteration keeps).
        assert_eq!(replayed.replayed_iterations(), 26);
    } else {
        assert_eq!(replayed.replayed_iterations(), 0);
    }
}

#[test]
fn snapshots_and_clones_keep_their_values_while_replays_go_on() {
    let device = device();
    let mut trainer = trainer(true, 16, &device);
    for _ in 0..4 {
        trainer.step();
    }
    // Iteration 4 of 8 since the update: the trainer works on the replay's buffers now.
    let snapshot = trainer.sites();
    let held = values(snapshot.clone());
    let mut clone = trainer.clone();
    let cloned = values(clone.sites());
    assert_eq!(held, cloned, "a clone starts where the trainer is");
    for _ in 0..3 {
        trainer.step();
    }
    assert_eq!(
        values(snapshot),
        held,
        "a snapshot is not rewritten by later replays"
    );
    assert_eq!(
        values(clone.sites()),
        cloned,
        "a clone is not stepped by the original"
    );
    assert_ne!(values(trainer.sites()), held, "the trainer went on");
    // The clone goes on from where it was, as the original did.
    let mut again = trainer_at(4, &device);
    for _ in 0..3 {
        clone.step();
        again.step();
    }
    assert_close(
        &values(clone.sites()),
        &values(again.sites()),
        2e-4,
        2e-4,
        "a clone steps on",
    );
}

/// A replaying trainer after `steps` iterations.
fn trainer_at(steps: usize, device: &Device) -> Trainer {
    let mut trainer = trainer(true, 16, device);
    for _ in 0..steps {
        trainer.step();
    }
    trainer
}

/// Trainers on several threads record their graphs in turn (CUDA's capture fails while another
/// stream of the process allocates; see `capture_gate`) and step as one alone does.
#[test]
fn trainers_on_several_threads_record_in_turn_and_step_as_alone() {
    let device = device();
    let iters = 30;
    let mut alone = trainer(false, iters, &device);
    for _ in 0..iters {
        alone.step();
    }
    let want = values(alone.sites());
    let start = std::sync::Barrier::new(3);
    let results: Vec<(Vec<f32>, usize)> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..3)
            .map(|_| {
                scope.spawn(|| {
                    // The reads below are device work too, which a recording on another thread
                    // must not meet.
                    let _share = DeviceShare::take();
                    let mut trainer = trainer(true, iters, &device);
                    start.wait();
                    for _ in 0..iters {
                        trainer.step();
                    }
                    (values(trainer.sites()), trainer.replayed_iterations())
                })
            })
            .collect();
        runs.into_iter().map(|run| run.join().unwrap()).collect()
    });
    for (got, replayed) in results {
        assert_close(&got, &want, 2e-4, 2e-4, "sites after the threaded fit");
        let expected = if replays_here(&device) { 26 } else { 0 };
        assert_eq!(replayed, expected);
    }
}
