//! `sad`: the burn-sad command line, one module per subcommand.

mod checks;
mod convert;
mod fit;
mod fit_args;
mod fit_checks;
mod fit_many;
mod render;
mod results;
mod ssim;
mod startup;
mod view;
#[cfg(feature = "wgpu")]
mod viewer_server;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use burn_sad::device::{DeviceChoice, KernelFamily, select_device_for};
use burn_sad::kernel_cache::{KernelCache, enable_kernel_cache};
use clap::{Parser, Subcommand};

use convert::ConvertArgs;
use fit_args::FitArgs;
use render::RenderArgs;
use results::ResultsArgs;
use ssim::SsimArgs;
use view::ViewArgs;

/// Fused, differentiable image kernels for Burn.
#[derive(Parser)]
#[command(name = "sad", version, about)]
struct Cli {
    /// Device: auto, cuda, rocm, wgpu, wgpu-cpu, vulkan, metal, cpu or flex
    /// (default: $BURN_SAD_DEVICE, else auto).
    #[arg(long, global = true)]
    device: Option<DeviceChoice>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Fit an image with SAD (the reference trainer's recipe); writes `OUT_DIR/<name>.png` and
    /// `OUT_DIR/<name>_sites.txt` (or `.sadp` with `--format packed`). Several images, folders or globs: a data set, with
    /// `OUT_DIR/results.csv`.
    Fit(Box<FitArgs>),
    /// Print the SSIM of two images of the same size (RGB, values / 255; at most 16 384 pixels
    /// on a side).
    Ssim(SsimArgs),
    /// Render a sites file (`*_sites.txt`, the reference trainer's format, or a packed
    /// `*_sites.sadp`) to a PNG.
    Render(RenderArgs),
    /// Convert a sites file between the text format and the 16-byte packed format, chosen by
    /// the output's extension (`.txt` or `.sadp`); needs no device.
    Convert(ConvertArgs),
    /// Merge the results tables of data-set fits (e.g. the shards of an array job) and print
    /// their summary; needs no device.
    Results(ResultsArgs),
    /// Show a sites file (text or packed) in the browser viewer: serves the page on loopback and prints
    /// its address. The page renders with the library's own kernels on WebGPU, with pan and
    /// zoom, the debug views, a comparison with a target image and PNG export.
    View(ViewArgs),
}

fn main() -> ExitCode {
    startup::mark_start();
    // Parsed first: a usage error exits from inside clap, before anything is made to clean up.
    let cli = Cli::parse();
    let runtime_dir = private_runtime_dir();
    let code = match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    };
    if let Some(dir) = runtime_dir {
        let _ = std::fs::remove_dir(dir);
    }
    code
}

/// Without `XDG_RUNTIME_DIR` (containers, CI jobs, ssh sessions without a login manager) Mesa's
/// Vulkan drivers print a dozen "XDG_RUNTIME_DIR is invalid or not set" errors, though nothing
/// here needs the directory. Gives the process a private empty one (mode 0700) instead, which
/// `main` removes at the end; returns it if it made one.
#[cfg(unix)]
fn private_runtime_dir() -> Option<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    if std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|dir| !dir.is_empty()) {
        return None;
    }
    let dir = std::env::temp_dir().join(format!("burn-sad-runtime-{}", std::process::id()));
    std::fs::DirBuilder::new().mode(0o700).create(&dir).ok()?;
    // SAFETY: called at the start of `main`, before any other thread exists.
    unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
    Some(dir)
}

/// Only Mesa on Unix asks for `XDG_RUNTIME_DIR`.
#[cfg(not(unix))]
fn private_runtime_dir() -> Option<PathBuf> {
    None
}

fn run(cli: Cli) -> Result<()> {
    let device = cli.device;
    match cli.command {
        Command::Results(args) => results::results_command(args),
        Command::Convert(args) => convert::convert_command(args),
        Command::View(args) => view::view_command(args),
        // `--devices` names every device the fit uses: the default one is not started too.
        Command::Fit(args) => match args.devices.clone() {
            Some(list) => {
                use_kernel_cache();
                fit::fit_on_devices(*args, &list)
            }
            None => on_device(device, &KernelFamily::ALL, |d, s| {
                fit::fit_command(*args, d, s)
            }),
        },
        Command::Render(args) => on_device(device, &[KernelFamily::SadRender], |d, s| {
            render::render_command(args, d, s)
        }),
        Command::Ssim(args) => on_device(device, &[KernelFamily::Ssim], |d, s| {
            ssim::ssim_command(args, d, s)
        }),
    }
}

/// Turns the kernel cache on, before the first device: compiled kernels then come from disk
/// after the first run.
fn use_kernel_cache() {
    if let KernelCache::Failed(why) = enable_kernel_cache() {
        eprintln!("warning: kernels are compiled on every run: {why}");
    }
}

/// Runs `work` on the device `choice` names (default: `$BURN_SAD_DEVICE`, else auto), with its
/// description; the device must run `families`' kernels (auto passes over one that cannot).
fn on_device(
    choice: Option<DeviceChoice>,
    families: &[KernelFamily],
    work: impl FnOnce(&burn::tensor::Device, &str) -> Result<()>,
) -> Result<()> {
    use_kernel_cache();
    let choice = match choice {
        Some(choice) => choice,
        None => DeviceChoice::from_env().map_err(anyhow::Error::msg)?,
    };
    let (device, description) = select_device_for(choice, families).map_err(anyhow::Error::msg)?;
    startup::mark_device_ready();
    work(&device, &description)
}
