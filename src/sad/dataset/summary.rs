//! What a results table adds up to: the summary a data-set run and `sad results` print.

use std::time::Duration;

use super::{ResultRow, ResultsTable};

impl ResultsTable {
    /// The summary of the table's rows; `wall` is the run's wall time, or `None` to measure
    /// throughput by the summed training time (a merged table).
    pub fn summary(&self, wall: Option<Duration>) -> Summary {
        let done: Vec<&ResultRow> = self.rows().filter(|r| r.succeeded()).collect();
        let mean = |value: fn(&ResultRow) -> f64| {
            done.iter().map(|r| value(r)).sum::<f64>() / done.len().max(1) as f64
        };
        let training: f64 = done.iter().map(|r| r.training_s).sum();
        let seconds = wall.map_or(training, |wall| wall.as_secs_f64());
        let pixels: f64 = done.iter().map(|r| (r.width * r.height) as f64).sum();
        Summary {
            fitted: done.len(),
            failed: self.len() - done.len(),
            mean_psnr: mean(|r| r.psnr),
            mean_ssim: mean(|r| r.ssim),
            training_s: training,
            seconds,
            images_per_s: done.len() as f64 / seconds.max(1e-9),
            megapixels_per_s: pixels / 1e6 / seconds.max(1e-9),
        }
    }
}

/// What a results table adds up to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Images fitted.
    pub fitted: usize,
    /// Images that failed.
    pub failed: usize,
    /// Mean PSNR of the fitted images, dB (0 with none).
    pub mean_psnr: f64,
    /// Mean SSIM of the fitted images.
    pub mean_ssim: f64,
    /// Summed training time, seconds.
    pub training_s: f64,
    /// The time the throughput is measured over: the run's wall time, or the summed training
    /// time.
    pub seconds: f64,
    /// Fitted images per second.
    pub images_per_s: f64,
    /// Fitted megapixels per second.
    pub megapixels_per_s: f64,
}

impl std::fmt::Display for Summary {
    /// Four lines, the last `mean PSNR: <value> dB`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "Images: {} fitted, {} failed", self.fitted, self.failed)?;
        // Small images make well under a megapixel a second: kilopixels read better there.
        let rate = if self.megapixels_per_s >= 0.1 {
            format!("{:.3} Mpx/s", self.megapixels_per_s)
        } else {
            format!("{:.2} kpx/s", self.megapixels_per_s * 1e3)
        };
        writeln!(
            f,
            "Time: {:.2} s in all, {:.2} s of training per image | {:.3} images/s | {rate}",
            self.seconds,
            self.training_s / self.fitted.max(1) as f64,
            self.images_per_s,
        )?;
        writeln!(f, "mean SSIM: {:.4}", self.mean_ssim)?;
        write!(f, "mean PSNR: {:.4} dB", self.mean_psnr)
    }
}
