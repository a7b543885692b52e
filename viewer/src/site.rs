//! The viewer's static files: the page and its scripts, built into the library from `viewer/`,
//! and the kernels' manifest, compiled when asked for.

use std::path::{Path, PathBuf};

use burn_sad::image::write_all_atomically;
use burn_sad::sad::fit::{TRAINER_CONSTANTS, TrainerConstants, TrainingConfig};

use super::{ViewerError, viewer_kernels};

/// A file of the page: its path under the site's root, its content type and its text.
#[derive(Clone, Copy, Debug)]
pub struct PageFile {
    /// Path under the site's root, without a leading slash.
    pub path: &'static str,
    /// The `Content-Type` it is served with.
    pub content_type: &'static str,
    /// Its text.
    pub text: &'static str,
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// A file of `viewer/`, built in.
macro_rules! page_file {
    ($path:literal, $content_type:expr) => {
        PageFile {
            path: $path,
            content_type: $content_type,
            text: include_str!(concat!("../", $path)),
        }
    };
}

/// The pages' files, as `viewer/` holds them: the viewer (`index.html`), the trainer
/// (`train.html`) and the bench (`bench.html`).
pub const PAGE_FILES: &[PageFile] = &[
    page_file!("index.html", HTML),
    page_file!("viewer.css", CSS),
    page_file!("viewer.js", JS),
    page_file!("gpu.js", JS),
    page_file!("fetch_own.js", JS),
    page_file!("sites.js", JS),
    page_file!("sites_export.js", JS),
    page_file!("train.html", HTML),
    page_file!("train_page.js", JS),
    page_file!("trainer.js", JS),
    page_file!("target.js", JS),
    page_file!("schedule.js", JS),
    page_file!("bench.html", HTML),
    page_file!("bench.js", JS),
];

/// The name the page fetches the kernels' manifest by.
pub const MANIFEST: &str = "kernels.json";

/// The kernels' manifest: a JSON object `{ "generator", "training", "kernels": [...] }` of
/// [`ExportedKernel`](super::ExportedKernel)s, compiled now from the library's kernels, with the
/// trainer page's schedule table: `training.config` (the [`TrainingConfig`] defaults under
/// `sad fit`'s config keys) and `training.constants` ([`TRAINER_CONSTANTS`], the numbers the
/// Rust trainer reads).
pub fn manifest_json() -> Result<String, ViewerError> {
    #[derive(serde::Serialize)]
    struct Training {
        config: TrainingConfig,
        constants: TrainerConstants,
    }
    #[derive(serde::Serialize)]
    struct Manifest {
        generator: String,
        training: Training,
        kernels: Vec<super::ExportedKernel>,
    }
    let manifest = Manifest {
        generator: format!("burn-sad {}", env!("CARGO_PKG_VERSION")),
        training: Training {
            config: TrainingConfig::default(),
            constants: TRAINER_CONSTANTS,
        },
        kernels: viewer_kernels()?,
    };
    serde_json::to_string_pretty(&manifest).map_err(|error| ViewerError::Io(error.to_string()))
}

/// Writes the whole page into `dir` (created if missing): its files and [`MANIFEST`], for any
/// static web server, as a unit (see [`write_all_atomically`]): every file goes to a temporary
/// name first, and only when all are written are they renamed into place.
pub fn write_page(dir: &Path) -> Result<(), ViewerError> {
    let manifest = manifest_json()?;
    let io = |error: std::io::Error| ViewerError::Io(format!("{}: {error}", dir.display()));
    std::fs::create_dir_all(dir).map_err(io)?;
    let paths: Vec<_> = PAGE_FILES
        .iter()
        .map(|file| file.path)
        .chain([MANIFEST])
        .map(|name| dir.join(name))
        .collect();
    let texts = PAGE_FILES
        .iter()
        .map(|file| file.text)
        .chain([manifest.as_str()]);
    let files: Vec<(&Path, &[u8])> = paths
        .iter()
        .map(PathBuf::as_path)
        .zip(texts.map(str::as_bytes))
        .collect();
    write_all_atomically(&files).map_err(io)
}
