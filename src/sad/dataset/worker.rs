//! [`fit_many`](super::fit_many)'s workers: each takes the next image until none is left, fits
//! it on its device and records its row.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use burn::tensor::Device;

use super::{
    DatasetError, DatasetEvent, DatasetOptions, ResultRow, ResultsTable, output_stem, row_name,
};
use crate::image::{ImageFile, encode_png, write_all_atomically};
use crate::sad::fit::{FitOptions, TargetImage, Trainer};

/// The state the workers of [`fit_many`](super::fit_many) share.
pub(super) struct Shared {
    pub(super) table: ResultsTable,
    pub(super) fitted: usize,
    pub(super) failed: usize,
    pub(super) skipped: usize,
    /// A failure to save the table, which stops the run.
    pub(super) error: Option<DatasetError>,
}

/// `mutex`'s value, also after a panic elsewhere poisoned it (each holder leaves it whole).
pub(super) fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One worker: takes the next image until none is left.
pub(super) struct Worker<'a> {
    pub(super) images: &'a [PathBuf],
    pub(super) options: &'a DatasetOptions,
    pub(super) fit: &'a FitOptions,
    pub(super) device: &'a (Device, String),
    pub(super) csv: &'a Path,
    pub(super) shared: &'a Mutex<Shared>,
    pub(super) next: &'a AtomicUsize,
}

impl Worker<'_> {
    /// Fits images until none is left or saving the table failed.
    pub(super) fn run(
        &self,
        admit: &mut dyn FnMut(&ImageFile, &Device) -> Result<(), String>,
        on_event: &mut dyn FnMut(DatasetEvent<'_>),
    ) {
        loop {
            let index = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(image) = self.images.get(index) else {
                return;
            };
            let name = row_name(image);
            let outputs = match output_stem(image) {
                Ok(stem) => Outputs {
                    png: self.options.out_dir.join(format!("{stem}.png")),
                    sites: self
                        .options
                        .out_dir
                        .join(self.options.format.file_name(&stem)),
                },
                Err(error) => {
                    self.record(self.failed_row(&name, error), on_event);
                    continue;
                }
            };
            {
                let mut shared = locked(self.shared);
                if shared.error.is_some() {
                    return;
                }
                if !self.options.force
                    && let Some(row) = shared.table.get(&name)
                    && row.succeeded()
                    && outputs.png.is_file()
                    && outputs.sites.is_file()
                {
                    let row = row.clone();
                    shared.skipped += 1;
                    drop(shared);
                    on_event(DatasetEvent::Skipped(&row));
                    continue;
                }
            }
            // A panic inside one fit fails that image's row, not the rows still to come.
            let fit = catch_unwind(AssertUnwindSafe(|| {
                fit_one(image, &name, &outputs, self, admit, on_event)
            }));
            let row = match fit {
                Ok(Ok(row)) => row,
                // The row names the image: its message need not.
                Ok(Err(why)) => {
                    let path = format!("{}: ", image.display());
                    self.failed_row(&name, why.strip_prefix(&path).unwrap_or(&why))
                }
                Err(panic) => {
                    let why = panic
                        .downcast_ref::<String>()
                        .map(String::as_str)
                        .or_else(|| panic.downcast_ref::<&str>().copied())
                        .unwrap_or("the fit panicked");
                    self.failed_row(&name, why)
                }
            };
            self.record(row, on_event);
        }
    }

    fn failed_row(&self, name: &str, why: impl std::fmt::Display) -> ResultRow {
        ResultRow::failed(name, &self.device.1, self.fit.seed, why)
    }

    /// Counts `row`, saves the table with it, and reports it.
    fn record(&self, row: ResultRow, on_event: &mut dyn FnMut(DatasetEvent<'_>)) {
        {
            let mut shared = locked(self.shared);
            if row.succeeded() {
                shared.fitted += 1;
            } else {
                shared.failed += 1;
            }
            shared.table.insert(row.clone());
            if let Err(error) = shared.table.save(self.csv) {
                shared.error.get_or_insert(error);
            }
        }
        on_event(DatasetEvent::Finished(&row));
    }
}

/// Where one image's outputs go.
struct Outputs {
    png: PathBuf,
    sites: PathBuf,
}

/// Fits one image and writes its outputs as a unit; its row, or why it failed.
fn fit_one(
    image: &Path,
    name: &str,
    outputs: &Outputs,
    worker: &Worker<'_>,
    admit: &mut dyn FnMut(&ImageFile, &Device) -> Result<(), String>,
    on_event: &mut dyn FnMut(DatasetEvent<'_>),
) -> Result<ResultRow, String> {
    let (options, (device, label)) = (worker.options, worker.device);
    let file = ImageFile::open(image, options.max_side).map_err(|error| error.to_string())?;
    admit(&file, device)?;
    let max_dim = worker.fit.config.effective_max_dim();
    let (width, height) = file.size_within(max_dim);
    let scaled = (width, height) != (file.width, file.height);
    on_event(DatasetEvent::Started {
        name,
        width,
        height,
        scaled_from: scaled.then_some((file.width, file.height)),
    });
    let (pixels, alpha) = file
        .decode_with_alpha_within(max_dim, worker.options.mask_alpha)
        .map_err(|error| error.to_string())?;
    let mut target = TargetImage::from_planar(pixels);
    if let Some(alpha) = alpha {
        target = target.with_mask(alpha).map_err(|error| error.to_string())?;
    }
    let trainer =
        Trainer::new(target, worker.fit.clone(), device).map_err(|error| error.to_string())?;
    trainer.warm_up();
    let result = trainer.run(|progress| on_event(DatasetEvent::Progress { name, progress }));
    let png = encode_png(result.image.clone().unsqueeze::<4>()).map_err(|e| e.to_string())?;
    let sites = (worker.options.format)
        .to_bytes(&result.sites)
        .map_err(|error| error.to_string())?;
    write_all_atomically(&[(&outputs.png, &png), (&outputs.sites, &sites)])
        .map_err(|error| format!("writing {}: {error}", outputs.png.display()))?;
    Ok(ResultRow {
        name: name.to_owned(),
        width,
        height,
        sites: result.sites.sites.len(),
        bpp: result.bits_per_pixel,
        psnr: result.psnr,
        ssim: result.ssim,
        training_s: result.training_time.as_secs_f64(),
        iterations: result.iterations,
        seed: worker.fit.seed,
        device: label.clone(),
        error: String::new(),
    })
}
