//! The reference trainer's `*_sites.txt` format, byte-compatible in both directions, and the
//! choice between it and the packed format.
//!
//! ```text
//! # SAD Sites (position_x, position_y, color_r, color_g, color_b, log_tau, radius, aniso_dir_x, aniso_dir_y, log_aniso)
//! # Image size: <W> <H>
//! # Total sites: <count>
//! <px> <py> <r> <g> <b> <log_tau> <radius> <dir_x> <dir_y> <log_aniso>
//! ```
//! Numbers are written like C's `%.9g` (9 significant digits, which round-trips every f32).
//! The column order differs from the in-memory order of [`SiteTable`]. Only active sites are
//! written.

use std::fmt::Write as _;
use std::path::Path;

use burn_sad_kernels::sad::{POSITION, RADIUS, SITE_PARAMS};

use super::columns::{COLUMN_LIMITS, COLUMN_NAMES, FILE_COLUMN};
use super::packed::{PACKED_MAGIC, PackedSites};
use crate::sad::SiteTable;
use crate::sad::error::SitesFileError;

/// The first header line, naming the columns.
pub const HEADER: &str = "# SAD Sites (position_x, position_y, color_r, color_g, color_b, log_tau, radius, aniso_dir_x, aniso_dir_y, log_aniso)";

/// Formats `value` as C's `printf("%.9g", value)`.
pub fn format_g9(value: f32) -> String {
    let value = f64::from(value);
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // The exponent after rounding to 9 significant digits decides the style, as in C.
    let scientific = format!("{value:.8e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` output has an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` exponent is an integer");
    if !(-4..9).contains(&exponent) {
        let mantissa = trim_fraction(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        let decimals = (8 - exponent) as usize;
        trim_fraction(&format!("{value:.decimals$}")).to_string()
    }
}

/// Drops trailing zeros of a fraction, and the point if nothing is left after it.
fn trim_fraction(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    }
}

/// The file text for `table`: header, then one line per active site. The `Image size` line is
/// left out when the table has no size (it came from a file without one).
pub fn sites_to_string(table: &SiteTable) -> String {
    let active: Vec<&[f32; SITE_PARAMS]> =
        table.sites.iter().filter(|s| s[POSITION] >= 0.0).collect();
    let mut text = String::with_capacity(110 * active.len() + 200);
    text.push_str(HEADER);
    text.push('\n');
    // A table read from a file without a size has none to write (0 × 0 would not read back).
    if table.width > 0 && table.height > 0 {
        let _ = writeln!(text, "# Image size: {} {}", table.width, table.height);
    }
    let _ = writeln!(text, "# Total sites: {}", active.len());
    for site in active {
        let mut columns = [0f32; SITE_PARAMS];
        for (memory, &file) in FILE_COLUMN.iter().enumerate() {
            columns[file] = site[memory];
        }
        let line: Vec<String> = columns.iter().map(|&v| format_g9(v)).collect();
        text.push_str(&line.join(" "));
        text.push('\n');
    }
    text
}

/// Writes `table` to `path` atomically (a temporary file in the same folder, then a rename).
pub fn write_sites(path: impl AsRef<Path>, table: &SiteTable) -> Result<(), SitesFileError> {
    write_sites_as(path, table, SitesFormat::Text)
}

/// Reads a sites file, text or packed (told apart by the packed file's magic).
pub fn read_sites(path: impl AsRef<Path>) -> Result<SiteTable, SitesFileError> {
    Ok(read_sites_with_format(path)?.0)
}

/// Reads a sites file, text or packed, and says which it was.
pub fn read_sites_with_format(
    path: impl AsRef<Path>,
) -> Result<(SiteTable, SitesFormat), SitesFileError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path)
        .map_err(|error| SitesFileError::Io(format!("{}: {error}", path.display())))?;
    Ok((parse_sites_bytes(&bytes)?, SitesFormat::of_bytes(&bytes)))
}

/// Parses a sites file's bytes: a packed file (see [`PackedSites`](super::PackedSites)) when
/// they start with its magic `SADP`, else the text format ([`parse_sites`]), which must be UTF-8.
pub fn parse_sites_bytes(bytes: &[u8]) -> Result<SiteTable, SitesFileError> {
    if SitesFormat::of_bytes(bytes) == SitesFormat::Packed {
        return Ok(PackedSites::parse(bytes)?.unpack());
    }
    let text = std::str::from_utf8(bytes).map_err(|error| SitesFileError::Line {
        line: bytes[..error.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1,
        reason: "not UTF-8 text (nor a packed file, which starts with `SADP`)".into(),
    })?;
    parse_sites(text)
}

/// The two sites file formats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SitesFormat {
    /// The reference trainer's text (`*_sites.txt`), about 115 bytes a site.
    #[default]
    Text,
    /// The binary packed file (`*_sites.sadp`): 16 bytes a site after an 80-byte header, with
    /// the values quantised (see [`PackedSites`](super::PackedSites)).
    Packed,
}

impl SitesFormat {
    /// The format of a file that starts with `bytes`: packed when they start with its magic.
    pub fn of_bytes(bytes: &[u8]) -> Self {
        if bytes.starts_with(&PACKED_MAGIC) {
            Self::Packed
        } else {
            Self::Text
        }
    }

    /// The file name's extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Text => "txt",
            Self::Packed => "sadp",
        }
    }

    /// The sites file name a fit of the image `stem` writes: `<stem>_sites.txt` or
    /// `<stem>_sites.sadp`.
    pub fn file_name(self, stem: &str) -> String {
        format!("{stem}_sites.{}", self.extension())
    }

    /// The file's bytes for `table`.
    ///
    /// # Errors
    /// For `Packed`, as [`PackedSites::pack`](super::PackedSites::pack); `Text` never fails.
    pub fn to_bytes(self, table: &SiteTable) -> Result<Vec<u8>, SitesFileError> {
        match self {
            Self::Text => Ok(sites_to_string(table).into_bytes()),
            Self::Packed => Ok(PackedSites::pack(table)?.to_bytes()),
        }
    }
}

/// Writes `table` to `path` in `format`, atomically.
pub fn write_sites_as(
    path: impl AsRef<Path>,
    table: &SiteTable,
    format: SitesFormat,
) -> Result<(), SitesFileError> {
    let bytes = format.to_bytes(table)?;
    crate::image::write_atomically(path.as_ref(), &bytes)
        .map_err(|error| SitesFileError::Io(format!("{}: {error}", path.as_ref().display())))
}

/// Parses the text of a sites file.
///
/// Accepts what the reference writes and reads: `#` comment lines, an `Image size` header, and
/// data lines of 10 numbers (or the legacy 7, without direction and anisotropy, which default
/// to (1, 0) and 0). Unlike the reference, which skips lines it cannot parse, every problem is an
/// error naming its line: a malformed header, a wrong column count, a non-number, NaN or
/// infinity, a value whose exponential or square would overflow the render (see
/// `COLUMN_LIMITS`), a negative radius, or a `Total sites` count that disagrees with the data (a
/// truncated file). A file whose sites are all inactive is an error too. A file without an `Image size` header gets size 0 × 0; the renderer then
/// needs an explicit size.
pub fn parse_sites(text: &str) -> Result<SiteTable, SitesFileError> {
    // Editors on Windows may start a UTF-8 file with an invisible byte-order mark.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut size: Option<(usize, usize)> = None;
    let mut declared: Option<(usize, usize)> = None;
    let mut sites = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let line = raw.trim_matches([' ', '\t', '\r', '\n']);
        if line.is_empty() {
            continue;
        }
        let bad = |reason: String| SitesFileError::Line {
            line: number,
            reason,
        };
        if let Some(comment) = line.strip_prefix('#') {
            let lower = comment.to_lowercase();
            if lower.contains("image size") {
                size = Some(parse_size(comment).map_err(bad)?);
            } else if lower.contains("total sites") {
                let count = comment
                    .split(':')
                    .nth(1)
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .ok_or_else(|| {
                        bad("`Total sites` needs a count, as `# Total sites: 123`".into())
                    })?;
                declared = Some((count, number));
            }
            continue;
        }
        let values: Vec<f32> = line
            .split_whitespace()
            .map(|field| {
                field
                    .parse::<f32>()
                    .map_err(|_| bad(format!("`{field}` is not a number")))
            })
            .collect::<Result<_, _>>()?;
        let columns = match values.len() {
            10 => values,
            7 => [&values[..], &[1.0, 0.0, 0.0]].concat(),
            n => return Err(bad(format!("expected 10 (or 7) values, found {n}"))),
        };
        if let Some(column) = columns.iter().position(|v| !v.is_finite()) {
            return Err(bad(format!("value {} is not finite", column + 1)));
        }
        if let Some(column) = (0..10).find(|&c| columns[c].abs() > COLUMN_LIMITS[c]) {
            return Err(bad(format!(
                "{} = {} is outside ±{} (the render would overflow to NaN)",
                COLUMN_NAMES[column], columns[column], COLUMN_LIMITS[column]
            )));
        }
        let mut site = [0f32; SITE_PARAMS];
        for (memory, &file) in FILE_COLUMN.iter().enumerate() {
            site[memory] = columns[file];
        }
        if site[RADIUS] < 0.0 {
            return Err(bad(format!("negative radius {}", site[RADIUS])));
        }
        sites.push(site);
    }
    if let Some((count, line)) = declared
        && count != sites.len()
    {
        return Err(SitesFileError::Line {
            line,
            reason: format!(
                "the header declares {count} sites but the file holds {}; is it truncated?",
                sites.len()
            ),
        });
    }
    if sites.is_empty() {
        return Err(SitesFileError::NoSites);
    }
    if sites.iter().all(|site| site[POSITION] < 0.0) {
        return Err(SitesFileError::NoActiveSites(sites.len()));
    }
    let (width, height) = size.unwrap_or((0, 0));
    Ok(SiteTable {
        width,
        height,
        sites,
    })
}

/// `Image size: W H` → (W, H), both positive.
fn parse_size(comment: &str) -> Result<(usize, usize), String> {
    let fields: Vec<&str> = comment
        .split(':')
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .collect();
    match fields[..] {
        [w, h] => match (w.parse::<i64>(), h.parse::<i64>()) {
            (Ok(w), Ok(h)) if w > 0 && h > 0 => Ok((w as usize, h as usize)),
            (Ok(_), Ok(_)) => Err(format!("image size must be positive, got {w} {h}")),
            _ => Err(format!("image size must be two integers, got `{w} {h}`")),
        },
        _ => Err("expected `# Image size: <width> <height>`".into()),
    }
}

#[cfg(test)]
mod tests;
