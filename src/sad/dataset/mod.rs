//! Fitting a whole data set: the images of folders, globs and lists fitted on one device,
//! several at a time if asked, each writing `<stem>.png` and `<stem>_sites.txt` as a single fit does, with a
//! results table ([`ResultsTable`]) rewritten atomically after every image.
//!
//! A rerun skips every image whose row says it finished and whose two outputs exist (unless
//! `force`), so an interrupted run picks up where it stopped. An image that cannot be fitted
//! (undecodable, too large, a failing fit) gets a row with its error and the run goes on. A
//! cluster's array job runs one [`Shard`] of the set per task, each with its own results file,
//! and [`ResultsTable::merge`] puts them together.

mod inputs;
mod results;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use burn::tensor::Device;

pub use inputs::{IMAGE_EXTENSIONS, Shard, collect_images, output_stem, row_name};
pub use results::{CSV_HEADER, ResultRow, ResultsTable, Summary};

use super::fit::{FitOptions, FitProgress, TargetImage, Trainer};
use super::sites_to_string;
use crate::image::{ImageFile, check_writable_dir, encode_png, write_all_atomically};

/// Why a data-set fit could not run (an image that cannot be fitted is a row, not this).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DatasetError {
    /// An input names nothing usable.
    #[error("{input}: {why}")]
    Input {
        /// The input as given.
        input: String,
        /// What is wrong with it.
        why: String,
    },
    /// The inputs hold no image.
    #[error("the inputs hold no PNG or JPEG image")]
    NoImages,
    /// Two images would write the same outputs.
    #[error(
        "{first} and {second} would both write {stem}.png and {stem}_sites.txt: fit them into different output folders"
    )]
    SameOutputs {
        /// One image.
        first: String,
        /// The other.
        second: String,
        /// The outputs' shared stem.
        stem: String,
    },
    /// The results table cannot be read or written.
    #[error("{path}: {why}")]
    Results {
        /// The table's path.
        path: String,
        /// What went wrong.
        why: String,
    },
    /// The output folder cannot be written.
    #[error("{dir}: cannot write the outputs there: {why}")]
    OutDir {
        /// The folder.
        dir: String,
        /// What went wrong.
        why: String,
    },
}

/// What every image of a data set is fitted with, and where the outputs go.
#[derive(Clone, Debug)]
pub struct DatasetOptions {
    /// The fit of each image.
    pub fit: FitOptions,
    /// Where each image's outputs and the results table go.
    pub out_dir: PathBuf,
    /// The largest side an image may have (larger ones fail their row).
    pub max_side: usize,
    /// Fit images again whose outputs and row are complete.
    pub force: bool,
    /// The results files' stem: `results`, or a shard's ([`Shard::results_stem`]).
    pub results_stem: String,
    /// The device as the rows name it.
    pub device_label: String,
    /// Images fitted at once (at least 1), each by its own thread: on a GPU, small images
    /// leave most of it idle one at a time. Their fits launch op by op (see
    /// [`FitOptions::replay`]) where more than one runs.
    pub jobs: usize,
}

impl DatasetOptions {
    /// The results table's path, `<out_dir>/<results_stem>.csv` (the JSON lines beside it).
    pub fn results_csv(&self) -> PathBuf {
        self.out_dir.join(format!("{}.csv", self.results_stem))
    }
}

/// What [`fit_many`] reports as it goes.
#[derive(Debug)]
pub enum DatasetEvent<'a> {
    /// An image is skipped: its outputs and its finished row exist.
    Skipped(&'a ResultRow),
    /// An image's fit starts (after its header was read and admitted).
    Started {
        /// Its row name.
        name: &'a str,
        /// Its size.
        width: usize,
        /// Its size.
        height: usize,
    },
    /// An iteration of the current image's fit.
    Progress {
        /// Its row name.
        name: &'a str,
        /// Where the fit is.
        progress: &'a FitProgress,
    },
    /// An image is done, fitted or failed; its row is saved.
    Finished(&'a ResultRow),
}

/// How a [`fit_many`] run went.
#[derive(Clone, Debug)]
pub struct DatasetReport {
    /// Every row of the results table: this run's and those of earlier runs.
    pub table: ResultsTable,
    /// Images fitted by this run.
    pub fitted: usize,
    /// Images that failed in this run.
    pub failed: usize,
    /// Images skipped as already done.
    pub skipped: usize,
    /// This run's wall time.
    pub wall: Duration,
}

/// The state the workers of [`fit_many`] share.
struct Shared {
    table: ResultsTable,
    fitted: usize,
    failed: usize,
    skipped: usize,
    /// A failure to save the table, which stops the run.
    error: Option<DatasetError>,
}

/// `mutex`'s value, also after a panic elsewhere poisoned it (each holder leaves it whole).
fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Fits each of `images` on `device`, `options.jobs` at a time (see the module's
/// documentation). `admit` sees each image's header before it is decoded and may refuse it (a
/// memory check, say: its message goes into the row). Fails only where the output folder or
/// the results table cannot be used; every image gets a row.
pub fn fit_many(
    images: &[PathBuf],
    options: &DatasetOptions,
    device: &Device,
    admit: impl FnMut(&ImageFile) -> Result<(), String> + Send,
    on_event: impl FnMut(DatasetEvent<'_>) + Send,
) -> Result<DatasetReport, DatasetError> {
    let start = Instant::now();
    check_writable_dir(&options.out_dir).map_err(|error| DatasetError::OutDir {
        dir: options.out_dir.display().to_string(),
        why: error.to_string(),
    })?;
    let csv = options.results_csv();
    let table = ResultsTable::load_or_empty(&csv)?;
    // Written at once, so that a shard with nothing to fit still leaves its (empty) table.
    table.save(&csv)?;
    let shared = Mutex::new(Shared {
        table,
        fitted: 0,
        failed: 0,
        skipped: 0,
        error: None,
    });
    let (admit, on_event) = (Mutex::new(admit), Mutex::new(on_event));
    let next = AtomicUsize::new(0);
    let jobs = options.jobs.clamp(1, images.len().max(1));
    let mut fit = options.fit.clone();
    // Fits in flight record and replay graphs of their own at the same time, which a device's
    // graph capture need not allow: with several, every iteration is launched op by op.
    fit.replay &= jobs == 1;
    let worker = Worker {
        images,
        options,
        fit: &fit,
        device,
        csv: &csv,
        shared: &shared,
        next: &next,
    };
    let work = || {
        worker.run(&mut |file| (locked(&admit))(file), &mut |event| {
            (locked(&on_event))(event)
        })
    };
    if jobs == 1 {
        // On the caller's thread, as a single fit runs (a device's stream can be per thread).
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..jobs {
                scope.spawn(work);
            }
        });
    }
    let shared = shared.into_inner().unwrap_or_else(PoisonError::into_inner);
    if let Some(error) = shared.error {
        return Err(error);
    }
    Ok(DatasetReport {
        table: shared.table,
        fitted: shared.fitted,
        failed: shared.failed,
        skipped: shared.skipped,
        wall: start.elapsed(),
    })
}

/// One of [`fit_many`]'s workers: takes the next image until none is left.
struct Worker<'a> {
    images: &'a [PathBuf],
    options: &'a DatasetOptions,
    fit: &'a FitOptions,
    device: &'a Device,
    csv: &'a Path,
    shared: &'a Mutex<Shared>,
    next: &'a AtomicUsize,
}

impl Worker<'_> {
    fn run(
        &self,
        admit: &mut dyn FnMut(&ImageFile) -> Result<(), String>,
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
                    sites: self.options.out_dir.join(format!("{stem}_sites.txt")),
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
        ResultRow::failed(name, &self.options.device_label, self.fit.seed, why)
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
    admit: &mut dyn FnMut(&ImageFile) -> Result<(), String>,
    on_event: &mut dyn FnMut(DatasetEvent<'_>),
) -> Result<ResultRow, String> {
    let (options, device) = (worker.options, worker.device);
    let file = ImageFile::open(image, options.max_side).map_err(|error| error.to_string())?;
    admit(&file)?;
    let (width, height) = (file.width, file.height);
    on_event(DatasetEvent::Started {
        name,
        width,
        height,
    });
    let pixels = file.decode().map_err(|error| error.to_string())?;
    let target = TargetImage::from_tensor(pixels.into_tensor(device));
    let trainer =
        Trainer::new(target, worker.fit.clone(), device).map_err(|error| error.to_string())?;
    trainer.warm_up();
    let result = trainer.run(|progress| on_event(DatasetEvent::Progress { name, progress }));
    let png = encode_png(result.image.clone().unsqueeze::<4>()).map_err(|e| e.to_string())?;
    let sites = sites_to_string(&result.sites);
    write_all_atomically(&[(&outputs.png, &png), (&outputs.sites, sites.as_bytes())])
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
        device: options.device_label.clone(),
        error: String::new(),
    })
}
