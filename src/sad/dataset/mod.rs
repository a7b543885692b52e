//! Fitting a whole data set: the images of folders, globs and lists fitted on one device,
//! several at a time if asked, each writing `<stem>.png` and `<stem>_sites.txt` (or `.sadp`) as a single fit does, with a
//! results table ([`ResultsTable`]) rewritten atomically after every image.
//!
//! A rerun skips every image whose row says it finished and whose two outputs exist (unless
//! `force`), so an interrupted run picks up where it stopped. An image that cannot be fitted
//! (undecodable, too large, a failing fit) gets a row with its error and the run goes on. A
//! cluster's array job runs one [`Shard`] of the set per task, each with its own results file,
//! and [`ResultsTable::merge`] puts them together.
//!
//! ```
//! use burn::tensor::{Device, Distribution, Tensor};
//! use burn_sad::image::{MAX_SIDE, save_png};
//! use burn_sad::sad::dataset::{DatasetOptions, collect_images, fit_many};
//! use burn_sad::sad::SitesFormat;
//! use burn_sad::sad::fit::{FitOptions, TrainingConfig};
//!
//! let device = Device::default();
//! let dir = std::env::temp_dir().join(format!("burn-sad-dataset-doc-{}", std::process::id()));
//! std::fs::create_dir_all(dir.join("photos"))?;
//! for name in ["a", "b"] {
//!     let photo = Tensor::<4>::random([1, 3, 16, 20], Distribution::Default, &device);
//!     save_png(photo, dir.join("photos").join(format!("{name}.png")))?;
//! }
//! let config = TrainingConfig {
//!     default_iters: 10,
//!     default_sites: 100,
//!     default_max_sites: 100,
//!     default_target_bpp: 8.0,
//!     prune_start: 5,
//!     prune_freq: 5,
//!     prune_end: 8,
//!     ..TrainingConfig::default()
//! };
//! let options = DatasetOptions {
//!     fit: FitOptions::new(config),
//!     out_dir: dir.join("out"),
//!     max_side: MAX_SIDE,
//!     mask_alpha: false,
//!     force: false,
//!     results_stem: "results".into(),
//!     jobs: 1,
//!     format: SitesFormat::Text,
//! };
//! std::fs::create_dir_all(&options.out_dir)?;
//! let images = collect_images(&[dir.join("photos")])?;
//! let devices = [(device, "the default device".to_string())];
//! let report = fit_many(&images, &options, &devices, |_, _| Ok(()), |_| {})?;
//! assert_eq!((report.fitted, report.failed), (2, 0));
//! assert!(options.results_csv().is_file());
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod inputs;
mod results;
mod summary;
mod worker;

use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use burn::tensor::Device;

pub use inputs::{IMAGE_EXTENSIONS, Shard, collect_images, output_stem, row_name};
pub use results::{CSV_HEADER, ResultRow, ResultsTable};
pub use summary::Summary;

use super::SitesFormat;
use super::fit::{FitOptions, FitProgress};
use crate::image::{ImageFile, check_writable_dir};
use worker::{Shared, Worker, locked};

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
    /// No device to fit on.
    #[error("no device to fit on")]
    NoDevice,
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
    /// The largest side an image may have to be read (larger ones fail their row). Sides over
    /// the fit's MAX_DIM (`fit.config.max_dim`) are scaled down to it, as a single fit does.
    pub max_side: usize,
    /// Each image's alpha channel is its mask (see [`TargetImage::mask`]); an image without one
    /// counts every pixel.
    ///
    /// [`TargetImage::mask`]: crate::sad::fit::TargetImage::mask
    pub mask_alpha: bool,
    /// Fit images again whose outputs and row are complete.
    pub force: bool,
    /// The results files' stem: `results`, or a shard's ([`Shard::results_stem`]).
    pub results_stem: String,
    /// Images fitted at once on each device (at least 1), each by its own thread: on a GPU,
    /// small images leave most of it idle one at a time. Their fits launch op by op (see
    /// [`FitOptions::replay`]) where more than one runs in the process.
    pub jobs: usize,
    /// The sites files' format (`<stem>_sites.txt` or `<stem>_sites.sadp`).
    pub format: SitesFormat,
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
        /// The size it is fitted at.
        width: usize,
        /// The size it is fitted at.
        height: usize,
        /// The file's own size, where it was scaled down to MAX_DIM.
        scaled_from: Option<(usize, usize)>,
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

/// Fits each of `images` on `devices` (each a device and the label its rows give it),
/// `options.jobs` at a time on each (see the module's documentation): every device takes the
/// next image as it frees up. `admit` sees each image's header and the device it is to be
/// fitted on before it is decoded, and may refuse it (a memory check, say: its message goes
/// into the row). Fails only where the output folder or the results table cannot be used, or
/// no device is given; every image gets a row.
pub fn fit_many(
    images: &[PathBuf],
    options: &DatasetOptions,
    devices: &[(Device, String)],
    admit: impl FnMut(&ImageFile, &Device) -> Result<(), String> + Send,
    on_event: impl FnMut(DatasetEvent<'_>) + Send,
) -> Result<DatasetReport, DatasetError> {
    if devices.is_empty() {
        return Err(DatasetError::NoDevice);
    }
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
    let jobs = options.jobs.max(1);
    let workers = (jobs * devices.len()).min(images.len().max(1));
    let mut fit = options.fit.clone();
    // With several in flight, every iteration is launched op by op. Their recordings could take
    // turns (see `capture_gate`), but several fits in flight ran faster op by op than replayed
    // (benches/RESULTS.md).
    fit.replay &= workers == 1;
    // Worker w fits on device w mod n, so that every device gets its share of workers.
    let worker = |w: usize| Worker {
        images,
        options,
        fit: &fit,
        device: &devices[w % devices.len()],
        csv: &csv,
        shared: &shared,
        next: &next,
    };
    let work = |w: usize| {
        worker(w).run(
            &mut |file, device| (locked(&admit))(file, device),
            &mut |event| (locked(&on_event))(event),
        )
    };
    if workers == 1 {
        // On the caller's thread, as a single fit runs (a device's stream can be per thread).
        work(0);
    } else {
        std::thread::scope(|scope| {
            let mut spawned = 0;
            for w in 0..workers {
                // Named, so that a profiler or /proc tells the workers from CubeCL's threads.
                let named = std::thread::Builder::new().name(format!("sad-fit-{w}"));
                // A thread the system refuses leaves its images to the other workers.
                spawned += usize::from(named.spawn_scoped(scope, move || work(w)).is_ok());
            }
            if spawned == 0 {
                work(0);
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
