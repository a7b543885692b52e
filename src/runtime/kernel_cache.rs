//! Compiled kernels kept on disk between runs.
//!
//! CubeCL compiles every kernel the first time a process launches it. For a `sad fit` on a
//! small photo that costs several times the training loop itself, on every run. With the cache
//! on, the compiled code (PTX for CUDA) is written to a per-user directory and read back by the
//! next process, so only the first run of a binary on a machine pays for compilation.
//!
//! Entries are keyed by the kernel, its compile-time parameters, the GPU architecture and the
//! build of the executable, so a rebuilt binary never reads a stale entry. Only the CUDA runtime
//! keeps compiled kernels in CubeCL 0.11; elsewhere [`enable_kernel_cache`] reports
//! [`KernelCache::Unsupported`].
//!
//! ```
//! use burn_sad::kernel_cache::{KernelCache, enable_kernel_cache};
//!
//! // Once, before the first kernel launches (the `sad` command line does this).
//! match enable_kernel_cache() {
//!     KernelCache::Directory(dir) => println!("compiled kernels are kept in {}", dir.display()),
//!     other => println!("no kernel cache: {other:?}"),
//! }
//! ```

use std::path::PathBuf;

/// The environment variable that moves the cache (a directory) or turns it off (`off`).
pub const KERNEL_CACHE_ENV: &str = "BURN_SAD_KERNEL_CACHE";

/// What [`enable_kernel_cache`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelCache {
    /// Compiled kernels are read from and written to this directory.
    Directory(PathBuf),
    /// Turned off by `BURN_SAD_KERNEL_CACHE=off`.
    Off,
    /// No compiled-in runtime keeps compiled kernels on disk.
    Unsupported,
    /// CubeCL was configured before (by the application or a `cubecl.toml` already read); its
    /// settings stay.
    AlreadyConfigured,
    /// The directory could not be made; kernels are compiled in memory as before.
    Failed(String),
}

impl std::fmt::Display for KernelCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Directory(dir) => write!(f, "kernel cache: {}", dir.display()),
            Self::Off => write!(f, "kernel cache: off ({KERNEL_CACHE_ENV}=off)"),
            Self::Unsupported => write!(f, "kernel cache: not kept by this runtime"),
            Self::AlreadyConfigured => write!(f, "kernel cache: as CubeCL was configured"),
            Self::Failed(why) => write!(f, "kernel cache: off ({why})"),
        }
    }
}

/// The default cache directory: `$XDG_CACHE_HOME/burn-sad/kernels`, else
/// `$HOME/.cache/burn-sad/kernels`.
pub fn default_kernel_cache_dir() -> Option<PathBuf> {
    let from = |name: &str| {
        std::env::var_os(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    let base = from("XDG_CACHE_HOME").or_else(|| from("HOME").map(|home| home.join(".cache")))?;
    Some(base.join("burn-sad").join("kernels"))
}

/// Where the cache should live according to [`KERNEL_CACHE_ENV`]: `None` when it is `off`.
fn requested_dir() -> Result<Option<PathBuf>, String> {
    match std::env::var_os(KERNEL_CACHE_ENV) {
        Some(value) if value == "off" || value == "0" => Ok(None),
        Some(value) if !value.is_empty() => Ok(Some(PathBuf::from(value))),
        _ => default_kernel_cache_dir()
            .map(Some)
            .ok_or_else(|| "neither XDG_CACHE_HOME nor HOME names a directory".to_owned()),
    }
}

/// Turns the on-disk kernel cache on for this process. Call it before the first device is
/// used; later, CubeCL's configuration is fixed and this returns
/// [`KernelCache::AlreadyConfigured`]. Never fails: without a cache, kernels are compiled in
/// memory as usual.
pub fn enable_kernel_cache() -> KernelCache {
    let dir = match requested_dir() {
        Ok(Some(dir)) => dir,
        Ok(None) => return KernelCache::Off,
        Err(why) => return KernelCache::Failed(why),
    };
    configure(dir)
}

#[cfg(feature = "cuda")]
fn configure(dir: PathBuf) -> KernelCache {
    use cubecl::config::{CubeClRuntimeConfig, RuntimeConfig, cache::CacheConfig};

    if let Err(error) = std::fs::create_dir_all(&dir) {
        return KernelCache::Failed(format!("cannot create {}: {error}", dir.display()));
    }
    // A `cubecl.toml` of the user's still applies; only the cache switch and place are ours.
    let mut config = CubeClRuntimeConfig::from_current_dir().override_from_env();
    config.compilation.cache = true;
    config.environment.path = CacheConfig::Directory(dir.clone());
    if CubeClRuntimeConfig::try_set(config) {
        KernelCache::Directory(dir)
    } else {
        KernelCache::AlreadyConfigured
    }
}

#[cfg(not(feature = "cuda"))]
fn configure(_dir: PathBuf) -> KernelCache {
    KernelCache::Unsupported
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_dir_is_per_user() {
        if let Some(dir) = default_kernel_cache_dir() {
            assert!(dir.is_absolute());
            assert!(dir.ends_with("burn-sad/kernels"));
        }
    }
}
