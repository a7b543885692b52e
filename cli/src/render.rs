//! `sad render`: a sites file (text or packed) to a PNG, as the reference's render-only mode.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use burn::tensor::Device;
use burn_sad::device::memory_on_host;
use burn_sad::image::{load_rgb, save_png};
use burn_sad::sad::{
    MAX_PASSES, RenderOnlyOptions, SiteTable, SiteView, SitesFileError, SitesFormat, psnr,
    quantise_sites, read_sites_with_format, render_sites_with_progress, render_view,
};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use crate::checks;

/// `sad render` options.
#[derive(Args)]
pub struct RenderArgs {
    /// The sites file.
    sites: PathBuf,
    /// Output PNG (a new name: not the sites file).
    #[arg(short, long)]
    out: PathBuf,
    /// Output width, at most 16 384 (default: the file's; alone, the height follows the aspect
    /// ratio).
    #[arg(long, allow_negative_numbers = true)]
    width: Option<usize>,
    /// Output height, at most 16 384 (default: the file's; alone, the width follows the aspect
    /// ratio).
    #[arg(long, allow_negative_numbers = true)]
    height: Option<usize>,
    /// Image to compare with: prints `PSNR: <value> dB` as the last line.
    #[arg(long)]
    target: Option<PathBuf>,
    /// At another size, scale positions alone, as the reference's PyTorch render does (radii
    /// stay in pixels, so cells grow or shrink relative to the image). By default positions
    /// and radii scale together: the same diagram at any size, as `sad view` draws it.
    #[arg(long)]
    reference_scaling: bool,
    /// Candidate propagation passes after the jump flood (0 to 1024).
    #[arg(long, default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_PASSES)))]
    passes: u32,
    /// What to draw: `image` (the render), `dots` (the render with each live site's position
    /// marked), or a debug view that colours each pixel by the site that wins it: `cells` (a
    /// colour per site, boundaries black), `tau` (log τ on a ramp, scale printed) or
    /// `anisotropy` (long axis and strength, scale printed).
    #[arg(long, value_enum, default_value_t = View::Image)]
    view: View,
    /// Zoom into the diagram (resolution-free: the cells, not their pixels, grow): 1 fits the
    /// whole file in the output, centred, at one scale for both axes; 4 is four times closer.
    /// Radii and τ follow the zoom. At most 1024.
    #[arg(long, allow_negative_numbers = true)]
    zoom: Option<f32>,
    /// The file's point `X,Y` (its pixels) at the centre of the output; implies a zoomed view
    /// (zoom 1 unless --zoom). Default: the file's centre.
    #[arg(long, value_parser = parse_point, allow_negative_numbers = true)]
    centre: Option<(f32, f32)>,
    /// Render the sites as the 16-byte packed record holds them (`sad fit --format packed`):
    /// each value quantised with the file's ranges, then rendered. A packed file is rendered as
    /// it is either way.
    #[arg(long)]
    packed: bool,
}

/// `X,Y` as two numbers.
fn parse_point(text: &str) -> Result<(f32, f32), String> {
    let parse = |part: &str| {
        part.trim()
            .parse::<f32>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("'{text}' is not a point X,Y of two finite numbers"))
    };
    match text.split_once(',') {
        Some((x, y)) => Ok((parse(x)?, parse(y)?)),
        None => Err(format!("'{text}' is not a point X,Y of two finite numbers")),
    }
}

/// `--view`'s values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum View {
    Image,
    Cells,
    Tau,
    Anisotropy,
    Dots,
}

impl From<View> for SiteView {
    fn from(view: View) -> Self {
        match view {
            View::Image => SiteView::Image,
            View::Cells => SiteView::Cells,
            View::Tau => SiteView::Tau,
            View::Anisotropy => SiteView::Anisotropy,
            View::Dots => SiteView::Dots,
        }
    }
}

/// Renders the file, saves the PNG and, with a target, prints the PSNR last.
pub fn render_command(args: RenderArgs, device: &Device, description: &str) -> Result<()> {
    let options = RenderOnlyOptions {
        width: args.width,
        height: args.height,
        reference_scaling: args.reference_scaling,
        passes: args.passes,
        zoom: args.zoom,
        centre: args.centre,
        ..RenderOnlyOptions::default()
    };
    eprintln!("device: {description}");
    let device_on_host = memory_on_host(device);
    render(&args, &options, device, device_on_host)
}

/// Reads a sites file, text or packed; the error names the file once (a read error already
/// names it).
pub fn read_sites_file(path: &Path) -> Result<SiteTable> {
    Ok(read_sites_file_with_format(path)?.0)
}

/// [`read_sites_file`], and the file's format.
pub fn read_sites_file_with_format(path: &Path) -> Result<(SiteTable, SitesFormat)> {
    read_sites_with_format(path).map_err(|error| with_path(error, path))
}

/// `error` with the file's name in front, unless it names it already (a read error does).
pub fn with_path(error: SitesFileError, path: &Path) -> anyhow::Error {
    match error {
        SitesFileError::Io(_) => anyhow::Error::new(error),
        other => anyhow::Error::new(other).context(path.display().to_string()),
    }
}

/// Pixels from which a render shows a progress bar (on a terminal).
const LONG_RENDER_PIXELS: usize = 1 << 22;

fn render(
    args: &RenderArgs,
    options: &RenderOnlyOptions,
    device: &Device,
    device_on_host: bool,
) -> Result<()> {
    let (sites, out, target) = (&args.sites, &args.out, args.target.as_deref());
    let view = SiteView::from(args.view);
    checks::check_png_output(out, sites)?;
    let (mut table, format) = read_sites_file_with_format(sites)?;
    if args.packed && format == SitesFormat::Text {
        table = quantise_sites(&table).map_err(|error| with_path(error, sites))?;
    }
    let (width, height) = options.size_for(&table)?;
    // The target is the file's photo: a PSNR against it means something for the file's own view
    // only, not for a zoomed or moved one.
    let placement = options.view_for(&table, (width, height))?;
    if target.is_some() && placement.is_some_and(|placement| !placement.is_identity()) {
        bail!("--target compares the file's own view; drop it, or --zoom and --centre");
    }
    checks::check_memory(
        &format!("a {width}×{height} render"),
        (width as u64) * (height as u64),
        checks::RENDER_HOST_BYTES_PER_PIXEL,
        checks::RENDER_DEVICE_BYTES_PER_PIXEL,
        device_on_host,
    )?;
    // Check the target before the work, so a mismatch costs nothing.
    let target = match target {
        Some(path) => {
            let image = load_rgb(path, device)?;
            let [_, _, h, w] = image.dims();
            if (w, h) != (width, height) {
                bail!(
                    "{} is {w}×{h} but the render is {width}×{height}; PSNR needs the same size",
                    path.display()
                );
            }
            Some(image.reshape([3, h, w]))
        }
        None => None,
    };
    println!("Loaded {} sites", table.sites.len());
    println!("Render size: {width}x{height}");
    let bar =
        (width * height >= LONG_RENDER_PIXELS && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(u64::from(options.passes) + 2);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} {msg} [{bar:30}] {pos}/{len} steps {elapsed}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.set_message("candidates + render");
            bar
        });
    let mut tick = |done: u32, _total: u32| {
        if let Some(bar) = &bar {
            bar.set_position(u64::from(done));
        }
    };
    let progress: Option<&mut dyn FnMut(u32, u32)> =
        if bar.is_some() { Some(&mut tick) } else { None };
    let loaded = crate::startup::since_start();
    let rendered = render_sites_with_progress(&table, options, device, progress)?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    println!(
        "Kernel warm-up: {:.1} ms (compilation, or loading from the kernel cache)",
        rendered.warm_up_ms
    );
    println!(
        "Start-up: {:.2} s from process start to the timed build (device {:.2} s, kernel warm-up included)",
        loaded + rendered.warm_up_ms / 1e3,
        crate::startup::device_seconds()
    );
    println!(
        "Candidate build: {:.3} ms | Render: {:.3} ms",
        rendered.candidate_ms, rendered.render_ms
    );
    let shown = match view {
        SiteView::Image => rendered.image.clone(),
        view => {
            let shown = render_view(
                view,
                &rendered.sites,
                &rendered.candidates,
                rendered.image.clone(),
            );
            println!("View: {}", shown.legend);
            shown.image
        }
    };
    save_png(shown.unsqueeze::<4>(), out)?;
    println!("Saved: {}", out.display());
    if let Some(target) = target {
        println!("PSNR: {:.4} dB", psnr(rendered.image, target));
    }
    Ok(())
}
