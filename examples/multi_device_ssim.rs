//! `ssim_l1_loss` in Burn's own data-parallel training: a small convolutional denoiser trained
//! by burn-train's `Learner` on every device given, each device fitting its share of every step's
//! batches and the gradients summed on the first device, which steps the optimizer
//! (`MultiDeviceOptim::OptimMainDevice`). Nothing here schedules devices or reduces gradients
//! itself: that is burn-train's.
//!
//! ```text
//! cargo run --release --features train --example multi_device_ssim -- --devices cuda:0,cuda:1
//! cargo run --release --features train --example multi_device_ssim -- --devices wgpu,wgpu-cpu --epochs 4
//! ```
//! Prints each epoch's mean training loss and the mean time of an optimizer step. The test at the
//! end trains on two devices of the default backend and checks that the loss falls and that the
//! replicas on both devices compute the same denoised image.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use burn::data::dataloader::DataLoaderBuilder;
use burn::data::dataloader::batcher::Batcher;
use burn::data::dataset::InMemDataset;
use burn::optim::AdamConfig;
use burn::tensor::{Device, ExecutionError, Tensor};
use burn::train::logger::InMemoryMetricLogger;
use burn::train::metric::{Adaptor, LossInput, LossMetric};
use burn::train::{
    ExecutionStrategy, InferenceStep, ItemLazy, Learner, MultiDeviceOptim, SupervisedTraining,
    TrainOutput, TrainStep, TrainingStrategy,
};
use burn_sad::device::select_devices;
use burn_sad::ssim::{SsimOptions, fused_ssim, ssim_l1_loss};

#[path = "multi_device_ssim/data.rs"]
mod data;
#[path = "multi_device_ssim/quiet_renderer.rs"]
mod quiet_renderer;
use data::{CropBatcher, NoisyBatch, NoisyCrop, noisy_crops};
use quiet_renderer::QuietRenderer;

#[path = "common/denoiser.rs"]
mod denoiser;
use denoiser::Denoiser;

const BATCH: usize = 4;
const LAMBDA: f32 = 0.2;

impl Denoiser {
    fn loss(&self, batch: NoisyBatch) -> Tensor<1> {
        ssim_l1_loss(
            self.forward(batch.noisy),
            batch.clean,
            LAMBDA,
            SsimOptions::default(),
        )
    }
}

/// What a step reports to burn-train's metrics: its loss.
pub struct StepLoss {
    loss: Tensor<1>,
}

impl ItemLazy for StepLoss {
    fn sync(self) -> Result<Self, ExecutionError> {
        self.loss.device().flush()?;
        Ok(Self {
            loss: self.loss.detach(),
        })
    }
}

impl Adaptor<LossInput> for StepLoss {
    fn adapt(&self) -> LossInput {
        LossInput::new(self.loss.clone())
    }
}

impl TrainStep for Denoiser {
    type Input = NoisyBatch;
    type Output = StepLoss;

    fn step(&self, batch: NoisyBatch) -> TrainOutput<StepLoss> {
        let loss = self.loss(batch);
        TrainOutput::new(self, loss.backward(), StepLoss { loss })
    }
}

impl InferenceStep for Denoiser {
    type Input = NoisyBatch;
    type Output = StepLoss;

    fn step(&self, batch: NoisyBatch) -> StepLoss {
        StepLoss {
            loss: self.loss(batch),
        }
    }
}

/// A finished training run.
struct Trained {
    model: Denoiser,
    /// The training loss of every batch, in the order burn-train processed them (one per device
    /// and step).
    losses: Vec<f64>,
    /// Optimizer steps taken.
    steps: usize,
    seconds: f64,
}

/// Trains a fresh denoiser for `epochs` on `devices` (the first is the main device) over
/// `crops`, each device taking batches of [`BATCH`] from its share of them.
fn train(devices: Vec<Device>, crops: Vec<NoisyCrop>, epochs: usize) -> anyhow::Result<Trained> {
    let main = devices[0].clone().autodiff();
    main.seed(7);
    let model = Denoiser::new(16, &main);
    // burn-train gives each device an equal slice, the last one the rest; an epoch ends with
    // the largest slice's last batch.
    let largest_slice = crops.len() - (devices.len() - 1) * (crops.len() / devices.len());
    let steps = epochs * largest_slice.div_ceil(BATCH);
    let loader = |items: Vec<NoisyCrop>| {
        DataLoaderBuilder::new(CropBatcher)
            .batch_size(BATCH)
            .shuffle(11)
            .build(InMemDataset::new(items))
    };
    let valid = crops[..BATCH].to_vec();
    let renderer = QuietRenderer::default();
    let losses = Arc::clone(&renderer.train_losses);
    let directory = std::env::temp_dir().join("burn-sad-multi-device");
    let strategy = ExecutionStrategy::MultiDevice(devices, MultiDeviceOptim::OptimMainDevice);
    let start = Instant::now();
    let result = SupervisedTraining::<Denoiser>::new(directory, loader(crops), loader(valid))
        .with_training_strategy(TrainingStrategy::Default(strategy))
        .num_epochs(epochs)
        .metric_train_numeric(LossMetric::new())
        .renderer(Box::new(renderer))
        .with_metric_logger(InMemoryMetricLogger::new())
        .with_application_logger(None)
        .launch(Learner::new(model, AdamConfig::new().init(), 3e-3));
    let seconds = start.elapsed().as_secs_f64();
    if let Some(error) = &result.error {
        bail!("training failed: {error}");
    }
    let losses = losses
        .lock()
        .map_err(|_| anyhow::anyhow!("loss log poisoned"))?
        .clone();
    Ok(Trained {
        model: result.model,
        losses,
        steps,
        seconds,
    })
}

/// The mean of `values`.
fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

fn main() -> anyhow::Result<()> {
    let mut devices = "auto".to_owned();
    let mut epochs = 6usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--devices" => devices = value,
            "--epochs" => {
                epochs = value
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .context("--epochs takes a whole number above 0")?
            }
            _ => bail!("unknown argument {arg}: expected --devices LIST or --epochs N"),
        }
    }
    let found = select_devices(&devices).map_err(anyhow::Error::msg)?;
    for (_, label) in &found {
        println!("device: {label}");
    }
    let devices: Vec<Device> = found.into_iter().map(|(device, _)| device).collect();
    let main_device = devices[0].clone();
    let mut crops = noisy_crops(96 + BATCH, &main_device)?;
    let held_out = CropBatcher.batch(crops.split_off(96), &main_device);
    let trained = train(devices, crops, epochs)?;
    // Every device's batches are logged, so an epoch's share of the log is its length / epochs.
    let per_epoch = (trained.losses.len() / epochs).max(1);
    for (epoch, losses) in trained.losses.chunks(per_epoch).enumerate() {
        println!(
            "epoch {:2}  mean training loss {:.4}",
            epoch + 1,
            mean(losses)
        );
    }
    println!(
        "{} optimizer steps in {:.2} s: {:.1} ms a step",
        trained.steps,
        trained.seconds,
        1e3 * trained.seconds / trained.steps as f64
    );
    let ssim = |image: Tensor<4>| {
        fused_ssim(image, held_out.clean.clone(), SsimOptions::default())
            .try_into_scalar::<f32>()
            .context("reading SSIM back")
    };
    println!(
        "SSIM on {BATCH} more crops: noisy {:.4} -> denoised {:.4}",
        ssim(held_out.noisy.clone())?,
        ssim(trained.model.forward(held_out.noisy.clone()))?
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use burn::module::Module;

    use super::*;

    /// Two devices of the default backend: the wgpu default adapter and the wgpu CPU adapter
    /// (both Mesa's lavapipe on CI), or Flex twice in a build without wgpu.
    fn two_devices() -> Vec<Device> {
        let list = if cfg!(feature = "wgpu") {
            "wgpu,wgpu-cpu"
        } else {
            "flex,flex"
        };
        select_devices(list)
            .expect("two devices")
            .into_iter()
            .map(|(device, _)| device)
            .collect()
    }

    #[test]
    fn two_devices_train_and_their_replicas_agree() {
        let devices = two_devices();
        let crops = noisy_crops(32, &devices[0]).expect("photos");
        let probe = CropBatcher.batch(crops[..2].to_vec(), &devices[0]);
        let epochs = 4;
        let trained = train(devices.clone(), crops, epochs).expect("training");
        // Each step trains one batch on each device: both devices' losses are logged.
        let per_epoch = 2 * (32 / 2usize).div_ceil(BATCH);
        assert_eq!(
            trained.losses.len(),
            epochs * per_epoch,
            "{:?}",
            trained.losses
        );
        // The first step's two batches against the last epoch (the loss drops within a few
        // steps, from about 0.19 to 0.13, then creeps down: a small model on little data).
        let first = mean(&trained.losses[..2]);
        let last = mean(&trained.losses[trained.losses.len() - per_epoch..]);
        assert!(
            last < 0.8 * first,
            "the loss did not fall: first step {first}, last epoch {last}: {:?}",
            trained.losses
        );
        // The trained model, copied to each device, denoises the same crops alike.
        let outputs: Vec<Vec<f32>> = devices
            .iter()
            .map(|device| {
                let replica = trained.model.clone().fork(device);
                let noisy = probe.noisy.clone().to_device(device);
                replica
                    .forward(noisy)
                    .try_to_vec_as::<f32>()
                    .expect("readable output")
            })
            .collect();
        let worst = outputs[0]
            .iter()
            .zip(&outputs[1])
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(worst < 1e-4, "replicas differ by up to {worst}");
    }
}
