//! burn-sad's browser viewer and trainer: a static page (this crate's `*.js`, `*.html` and
//! `*.css`, built in) that renders a `*_sites.txt` on WebGPU, and fits a photo, with the WGSL
//! that CubeCL compiles from burn-sad's own kernels: the page's files and the kernels'
//! manifest, which `sad view` serves or exports.
//!
//! ```
//! use burn_sad_viewer::{PAGE_FILES, viewer_kernels, write_page};
//!
//! // The kernels the page dispatches, compiled to WGSL here (no device needed).
//! let kernels = viewer_kernels()?;
//! assert!(kernels.iter().all(|kernel| kernel.wgsl.contains("@compute")));
//! // The page and its manifest, ready for any static web server.
//! let dir = std::env::temp_dir().join(format!("burn-sad-viewer-doc-{}", std::process::id()));
//! write_page(&dir)?;
//! assert!(PAGE_FILES.iter().all(|file| dir.join(file.path).is_file()));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod candidate_kernels;
mod export;
mod image_kernels;
mod kernels;
mod site;
mod train_kernels;
mod wgsl_fixups;

pub use export::{ExportedKernel, KernelArg};
pub use kernels::viewer_kernels;
pub use site::{MANIFEST, PAGE_FILES, PageFile, manifest_json, write_page};

/// Why the viewer could not be built or served.
#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    /// CubeCL's WGSL compiler rejected a kernel.
    #[error("compiling the {kernel} kernel to WGSL: {reason}")]
    Compile {
        /// The page's name for the kernel.
        kernel: &'static str,
        /// The compiler's message.
        reason: String,
    },
    /// A file or the network failed.
    #[error("{0}")]
    Io(String),
}
