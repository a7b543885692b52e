//! `sad convert`: a sites file from one format to the other, by the output's extension.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use burn_sad::sad::{SitesFormat, write_sites_as};
use clap::Args;

use crate::render::{read_sites_file_with_format, with_path};

/// `sad convert` options.
#[derive(Args)]
pub struct ConvertArgs {
    /// The sites file to read (text or packed).
    input: PathBuf,
    /// The file to write: `*.sadp` for the packed format, `*.txt` for the text format.
    output: PathBuf,
}

/// The format an output's extension names.
fn format_of(path: &Path) -> Result<SitesFormat> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("sadp") => Ok(SitesFormat::Packed),
        Some("txt") => Ok(SitesFormat::Text),
        _ => bail!(
            "{}: name the output *.sadp (packed) or *.txt (text)",
            path.display()
        ),
    }
}

/// Reads, converts and writes (atomically); prints the sizes.
pub fn convert_command(args: ConvertArgs) -> Result<()> {
    let format = format_of(&args.output)?;
    if args.output == args.input {
        bail!(
            "{}: write the converted file under another name",
            args.output.display()
        );
    }
    let (table, from) = read_sites_file_with_format(&args.input)?;
    write_sites_as(&args.output, &table, format).map_err(|error| with_path(error, &args.output))?;
    let bytes = |path: &Path| std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let (before, after) = (bytes(&args.input), bytes(&args.output));
    let pixels = (table.width * table.height) as f64;
    let bpp = |bytes: u64| {
        if pixels > 0.0 {
            format!(", {:.4} bpp", bytes as f64 * 8.0 / pixels)
        } else {
            String::new()
        }
    };
    println!(
        "{} sites: {} ({from:?}, {before} bytes{}) -> {} ({format:?}, {after} bytes{})",
        table.active(),
        args.input.display(),
        bpp(before),
        args.output.display(),
        bpp(after)
    );
    Ok(())
}
