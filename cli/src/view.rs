//! `sad view`: serves the browser viewer for a sites file (or, with `--train`, the trainer page
//! for a photo) on loopback, or writes the pages for a static web server.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;

/// `sad view` options.
#[derive(Args)]
pub struct ViewArgs {
    /// The sites file to show (text or packed).
    #[arg(required_unless_present = "train")]
    sites: Option<PathBuf>,
    /// Open the trainer page on this photo instead (PNG or JPEG): it fits the photo in the
    /// browser, with the library's training kernels on WebGPU.
    #[arg(long, value_name = "PHOTO", conflicts_with_all = ["sites", "target"])]
    train: Option<PathBuf>,
    /// A mask for `--train` (an image of the photo's size: white keeps a pixel, black leaves it
    /// out), as `sad fit --mask` reads it.
    #[arg(long, value_name = "IMAGE", requires = "train")]
    mask: Option<PathBuf>,
    /// An image to compare with (PNG or JPEG, the fit's size): side by side or by a swipe, and
    /// its PSNR.
    #[arg(long)]
    target: Option<PathBuf>,
    /// Port to listen on (0: any free port).
    #[arg(long, default_value_t = 8390)]
    port: u16,
    /// Address to listen on. Loopback by default: anyone who reaches the address reads the
    /// sites file and the target.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    bind: IpAddr,
    /// Write the page, its kernels, the sites file (as `sites.txt`) and the target into this
    /// folder for any static web server, instead of serving.
    #[arg(long, value_name = "DIR")]
    export: Option<PathBuf>,
}

/// Checks the inputs, then serves until interrupted (or writes the page).
#[cfg(feature = "wgpu")]
pub fn view_command(args: ViewArgs) -> Result<()> {
    use std::net::SocketAddr;

    use burn_sad_viewer::write_page;

    use crate::viewer_server::{SITES_NAME, TARGET_NAME, ViewerServer};

    use crate::render::read_sites_file;

    if let Some(photo) = &args.train {
        return train_page(&args, photo);
    }
    if args.mask.is_some() {
        bail!("--mask goes with --train PHOTO (the viewer compares with --target)");
    }
    let sites = args
        .sites
        .as_deref()
        .expect("clap requires the sites without --train");
    let table = read_sites_file(sites)?;
    if let Some(target) = &args.target {
        check_target(target, (table.width, table.height))?;
    }
    if let Some(dir) = &args.export {
        write_page(dir)?;
        copy_into(sites, &dir.join(SITES_NAME))?;
        let mut query = format!("?sites={SITES_NAME}");
        if let Some(target) = &args.target {
            copy_into(target, &dir.join(TARGET_NAME))?;
            query.push_str(&format!("&target={TARGET_NAME}"));
        }
        println!(
            "Wrote the viewer to {}: open index.html{query} from a web server (WebGPU needs http://localhost or https)",
            dir.display()
        );
        return Ok(());
    }
    let server = ViewerServer::bind(
        SocketAddr::new(args.bind, args.port),
        Some(sites),
        args.target.as_deref(),
        None,
    )?;
    let url = server.url()?;
    announce(&format!(
        "Viewing {} ({} sites, {}×{}) at\n{url}",
        sites.display(),
        table.sites.len(),
        table.width,
        table.height
    ));
    server.serve()?;
    Ok(())
}

/// `sad view --train PHOTO [--mask M]`: serves (or writes) the trainer page for the photo.
#[cfg(feature = "wgpu")]
fn train_page(args: &ViewArgs, photo: &std::path::Path) -> Result<()> {
    use std::net::SocketAddr;

    use burn_sad::image::{ImageFile, MAX_SIDE};
    use burn_sad_viewer::write_page;

    use crate::viewer_server::{MASK_NAME, TARGET_NAME, ViewerServer};

    let file = ImageFile::open(photo, MAX_SIDE)?;
    let (width, height) = (file.width, file.height);
    if let Some(mask) = &args.mask {
        let file = ImageFile::open(mask, MAX_SIDE)?;
        if (file.width, file.height) != (width, height) {
            bail!(
                "the mask {} is {}×{} but the photo is {width}×{height}",
                mask.display(),
                file.width,
                file.height
            );
        }
    }
    let mut query = format!("?image={TARGET_NAME}");
    if args.mask.is_some() {
        query.push_str(&format!("&mask={MASK_NAME}"));
    }
    if let Some(dir) = &args.export {
        write_page(dir)?;
        copy_into(photo, &dir.join(TARGET_NAME))?;
        if let Some(mask) = &args.mask {
            copy_into(mask, &dir.join(MASK_NAME))?;
        }
        println!(
            "Wrote the trainer page to {}: open train.html{query} from a web server (WebGPU needs http://localhost or https)",
            dir.display()
        );
        return Ok(());
    }
    let server = ViewerServer::bind(
        SocketAddr::new(args.bind, args.port),
        None,
        Some(photo),
        args.mask.as_deref(),
    )?;
    let url = format!("http://{}/train.html{query}", server.address()?);
    announce(&format!(
        "Training on {} ({width}×{height}) at\n{url}",
        photo.display()
    ));
    server.serve()?;
    Ok(())
}

/// Prints the page's address. Written whatever became of stdout: a reader that took the
/// address and closed the pipe (a script, a test) must not stop the server, which println!
/// would, by panicking.
#[cfg(feature = "wgpu")]
fn announce(what: &str) {
    use std::io::Write;

    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{what}\n(open it in a browser with WebGPU; Ctrl-C stops the server)"
    );
    let _ = out.flush();
}

/// Without the `wgpu` feature there is no WGSL compiler to build the page's kernels with.
#[cfg(not(feature = "wgpu"))]
pub fn view_command(args: ViewArgs) -> Result<()> {
    let _ = (
        args.sites,
        args.train,
        args.mask,
        args.target,
        args.port,
        args.bind,
    );
    let _ = args.export;
    bail!("this sad was built without the wgpu feature, which the viewer's kernels need (WGSL)")
}

/// The target must decode and have the fit's size.
#[cfg(feature = "wgpu")]
fn check_target(path: &std::path::Path, (width, height): (usize, usize)) -> Result<()> {
    use burn_sad::image::{ImageFile, MAX_SIDE};

    // The header only: format, truncation and size are checked without decoding.
    let file = ImageFile::open(path, MAX_SIDE)?;
    let (w, h) = (file.width, file.height);
    if (w, h) != (width, height) && width > 0 {
        bail!(
            "{} is {w}×{h} but the sites file is of a {width}×{height} image",
            path.display()
        );
    }
    Ok(())
}

#[cfg(feature = "wgpu")]
fn copy_into(from: &std::path::Path, to: &std::path::Path) -> Result<()> {
    use anyhow::Context;

    std::fs::copy(from, to)
        .map(|_| ())
        .with_context(|| format!("copying {} to {}", from.display(), to.display()))
}
