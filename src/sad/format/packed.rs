//! The 16-byte packed site and the binary packed sites file (`*_sites.sadp`).
//!
//! A packed site is 128 bits, stored as four little-endian `u32` words; bit *k* is bit *k* mod
//! 32 of word *k* / 32, and a field may cross a word:
//!
//! | bits | field |
//! |---|---|
//! | 0–16, 17–33 | position x, y: unorm17 over [0, W − 1] and [0, H − 1] |
//! | 34–43, 44–53, 54–63 | colour r, g, b: unorm10 over the file's ranges |
//! | 64–78 | log τ: unorm15 over the file's range |
//! | 79–94 | radius: unorm16 over the file's range |
//! | 95–110 | the direction's angle θ ∈ [0, π), in steps of π / 65536 |
//! | 111–126 | log anisotropy: unorm16 over the file's range |
//! | 127 | 1 for an inactive slot |
//!
//! A unorm*n* field stores round(clamp((v − min) / scale, 0, 1) · (2ⁿ − 1)) and reads back
//! min + q / (2ⁿ − 1) · scale, with `min` and `scale` = max(max − min, 10⁻⁶) taken over the active
//! sites of the file. Positions outside the image are clamped into it. A direction is read back
//! as a unit vector (training keeps it one).
//!
//! The reference's Metal render-only record (`packed_inference.swift`) spends the same 128 bits
//! as 15-bit positions, 11/11/10-bit colour, 16-bit log τ and radius, a 16-bit angle over a full
//! turn and log anisotropy as an IEEE half. Measured field by field on 16 bpp fits
//! (`benches/gpu/packed_fields.py`, `benches/RESULTS.md`), the positions' quantisation cost the
//! most (0.18 dB at 3840 × 2160) and the half float next, while a colour channel needs no more
//! than 10 bits; hence 17-bit positions and a ranged log anisotropy here. The render sees a
//! direction only through u·uᵀ (u and −u draw the same cell), so half a turn in 16 bits has
//! half the reference's angle step.
//!
//! The file: an 80-byte header, then 16 bytes per site.
//!
//! | bytes | field |
//! |---|---|
//! | 0–3 | magic `SADP` |
//! | 4–7 | format version, 1 |
//! | 8–11, 12–15 | image width, height (1 to 65535) |
//! | 16–19 | site count |
//! | 20–67 | twelve `f32`: min and scale of log τ, radius, colour r, g, b and log anisotropy |
//! | 68–79 | reserved, 0 |
//!
//! All numbers are little-endian. Only active sites are written, as in the text format.

use burn_sad_kernels::sad::{COLOR, DIRECTION, LOG_ANISO, LOG_TAU, POSITION, RADIUS, SITE_PARAMS};

use super::columns::{COLUMN_LIMITS, FILE_COLUMN};
use crate::sad::error::SitesFileError;
use crate::sad::sites::{INACTIVE_SITE, SiteTable};

/// The first four bytes of a packed sites file.
pub const PACKED_MAGIC: [u8; 4] = *b"SADP";
/// The packed file format version this build reads and writes.
pub const PACKED_VERSION: u32 = 1;
/// Bytes of the packed file's header.
pub const PACKED_HEADER_BYTES: usize = 80;
/// Bytes of one packed site.
pub const PACKED_SITE_BYTES: usize = 16;

/// Largest image side a packed file describes (the render's limit).
const MAX_SIDE: u32 = 65_535;
/// The record's fields: first bit and width.
const X: (u32, u32) = (0, 17);
const Y: (u32, u32) = (17, 17);
const RED: (u32, u32) = (34, 10);
const GREEN: (u32, u32) = (44, 10);
const BLUE: (u32, u32) = (54, 10);
const TAU: (u32, u32) = (64, 15);
const RAD: (u32, u32) = (79, 16);
const ANGLE: (u32, u32) = (95, 16);
const ANISO: (u32, u32) = (111, 16);
const INACTIVE: (u32, u32) = (127, 1);
/// The quantised fields with a per-file range, in header order: column, name, record field.
const RANGED: [(usize, &str, (u32, u32)); 6] = [
    (LOG_TAU, "log_tau", TAU),
    (RADIUS, "radius", RAD),
    (COLOR, "color_r", RED),
    (COLOR + 1, "color_g", GREEN),
    (COLOR + 2, "color_b", BLUE),
    (LOG_ANISO, "log_anisotropy", ANISO),
];
/// Smallest stored scale, as the reference's (a field with one value still reads back exactly).
const MIN_SCALE: f32 = 1e-6;

/// The per-file ranges of the quantised fields: `[min, scale]` each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PackedRanges {
    /// log τ.
    pub log_tau: [f32; 2],
    /// Radius, in pixels.
    pub radius: [f32; 2],
    /// Colour r, g and b.
    pub colour: [[f32; 2]; 3],
    /// log anisotropy.
    pub log_aniso: [f32; 2],
}

impl PackedRanges {
    /// The ranges in header order (log τ, radius, r, g, b, log anisotropy).
    fn in_order(&self) -> [[f32; 2]; 6] {
        [
            self.log_tau,
            self.radius,
            self.colour[0],
            self.colour[1],
            self.colour[2],
            self.log_aniso,
        ]
    }

    fn from_order(ranges: [[f32; 2]; 6]) -> Self {
        Self {
            log_tau: ranges[0],
            radius: ranges[1],
            colour: [ranges[2], ranges[3], ranges[4]],
            log_aniso: ranges[5],
        }
    }

    /// The ranges spanning `active` sites (a field without a finite value gets `[0, 10⁻⁶]`).
    fn spanning(active: &[[f32; SITE_PARAMS]]) -> Self {
        Self::from_order(RANGED.map(|(column, _, _)| {
            let values = active
                .iter()
                .map(|site| site[column])
                .filter(|value| value.is_finite());
            let (low, high) = values.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
            if low.is_finite() {
                [low, (high - low).max(MIN_SCALE)]
            } else {
                [0.0, MIN_SCALE]
            }
        }))
    }
}

/// Sites in the packed layout, with the size and ranges that decode them.
///
/// ```
/// use burn_sad::sad::{PackedSites, SiteTable};
///
/// // Position x, y, log τ, radius, colour r, g, b, direction x, y, log anisotropy.
/// let table = SiteTable {
///     width: 64,
///     height: 48,
///     sites: vec![
///         [10.0, 20.0, 3.0, 0.5, 0.9, 0.2, 0.1, 1.0, 0.0, 0.25],
///         [40.0, 30.0, 4.0, 1.5, 0.1, 0.8, 0.3, 0.0, 1.0, -0.5],
///     ],
/// };
/// let packed = PackedSites::pack(&table)?;
/// let bytes = packed.to_bytes();
/// assert_eq!(bytes.len(), 80 + 2 * 16);
/// let back = PackedSites::parse(&bytes)?.unpack();
/// // Each value comes back within its quantisation step.
/// assert!((back.sites[0][0] - 10.0).abs() <= 0.5 * 63.0 / 131071.0);
/// # Ok::<(), burn_sad::sad::SitesFileError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PackedSites {
    /// Image width the positions refer to.
    pub width: u32,
    /// Image height the positions refer to.
    pub height: u32,
    /// The ranges of the quantised fields.
    pub ranges: PackedRanges,
    /// Four words per site.
    pub records: Vec<[u32; 4]>,
}

/// The largest value of a field of `width` bits.
fn levels((_, width): (u32, u32)) -> f32 {
    ((1u32 << width) - 1) as f32
}

/// `record` with `value` in `field` (which must be clear).
fn put(record: u128, (first, width): (u32, u32), value: u32) -> u128 {
    debug_assert!(value < 1 << width);
    record | u128::from(value) << first
}

/// The value of `field` in `record`.
fn get(record: u128, (first, width): (u32, u32)) -> u32 {
    ((record >> first) & ((1u128 << width) - 1)) as u32
}

fn to_words(record: u128) -> [u32; 4] {
    std::array::from_fn(|w| (record >> (32 * w)) as u32)
}

fn from_words(words: &[u32; 4]) -> u128 {
    words.iter().enumerate().fold(0, |record, (w, &word)| {
        record | u128::from(word) << (32 * w)
    })
}

/// round(clamp((value − min) / scale, 0, 1) · levels), 0 for a non-positive scale.
fn unorm(value: f32, [min, scale]: [f32; 2], levels: f32) -> u32 {
    if scale <= 0.0 {
        return 0;
    }
    // In f64, so that only the rounding to a level moves the value.
    let n = ((f64::from(value) - f64::from(min)) / f64::from(scale)).clamp(0.0, 1.0);
    (n * f64::from(levels) + 0.5) as u32
}

/// The value a unorm field `q` of `levels` stands for.
fn from_unorm(q: u32, [min, scale]: [f32; 2], levels: f32) -> f32 {
    min + q as f32 * (1.0 / levels) * scale.max(0.0)
}

/// The direction's angle in [0, π) in steps of π / 65536 (u and −u are the same line).
fn pack_angle(x: f32, y: f32) -> u32 {
    let (x, y) = (f64::from(x), f64::from(y));
    let angle = if x * x + y * y < 1e-8 || !(x.is_finite() && y.is_finite()) {
        0.0
    } else {
        y.atan2(x).rem_euclid(std::f64::consts::PI)
    };
    ((angle / std::f64::consts::PI * 65536.0).round() as u32) % 65536
}

fn unpack_angle(q: u32) -> (f32, f32) {
    let angle = f64::from(q) * std::f64::consts::PI / 65536.0;
    (angle.cos() as f32, angle.sin() as f32)
}

/// A packed-file error.
fn bad(reason: impl Into<String>) -> SitesFileError {
    SitesFileError::Packed(reason.into())
}

fn word(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

impl PackedSites {
    /// Packs the active sites of `table`; the table needs its image size (positions are stored
    /// relative to it).
    ///
    /// # Errors
    /// [`SitesFileError::Packed`] for a table without an image size, larger than 65535 pixels
    /// on a side, or with values whose quantised range the reader would refuse (one that decodes
    /// past a column's limit); [`SitesFileError::NoActiveSites`] for one without active sites.
    pub fn pack(table: &SiteTable) -> Result<Self, SitesFileError> {
        let (width, height) = (table.width, table.height);
        if width == 0 || height == 0 {
            return Err(bad(
                "packing needs the image size, and the sites have none (no `# Image size` line)",
            ));
        }
        if width > MAX_SIDE as usize || height > MAX_SIDE as usize {
            return Err(bad(format!(
                "a {width}×{height} image is larger than the packed format's 65535 on a side"
            )));
        }
        let active: Vec<[f32; SITE_PARAMS]> = table
            .sites
            .iter()
            .copied()
            .filter(|site| site[POSITION] >= 0.0)
            .collect();
        if active.is_empty() {
            return Err(SitesFileError::NoActiveSites(table.sites.len()));
        }
        let ranges = PackedRanges::spanning(&active);
        // What this writes must read back: the reader's checks on the ranges.
        for (range, field) in ranges.in_order().into_iter().zip(RANGED) {
            check_range(range, field)?;
        }
        let records = active
            .iter()
            .map(|site| pack_site(site, width, height, &ranges))
            .collect();
        Ok(Self {
            width: width as u32,
            height: height as u32,
            ranges,
            records,
        })
    }

    /// The sites the records stand for.
    pub fn unpack(&self) -> SiteTable {
        SiteTable {
            width: self.width as usize,
            height: self.height as usize,
            sites: self
                .records
                .iter()
                .map(|record| unpack_site(record, self.width, self.height, &self.ranges))
                .collect(),
        }
    }

    /// The file: header, then the records.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes =
            Vec::with_capacity(PACKED_HEADER_BYTES + PACKED_SITE_BYTES * self.records.len());
        bytes.extend_from_slice(&PACKED_MAGIC);
        for value in [
            PACKED_VERSION,
            self.width,
            self.height,
            self.records.len() as u32,
        ] {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
        for value in self.ranges.in_order().iter().flatten() {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
        bytes.resize(PACKED_HEADER_BYTES, 0);
        for record in &self.records {
            for value in record {
                bytes.extend_from_slice(&value.to_le_bytes());
            }
        }
        bytes
    }

    /// Reads a packed file's bytes.
    ///
    /// # Errors
    /// [`SitesFileError::Packed`], in one line, for a file shorter than its header or than the
    /// sites it declares (or longer), another magic or version, a size of 0 or above 65535, a
    /// non-finite or negative range or one whose values would overflow the render, a negative
    /// radius, or reserved header bytes that are not 0 (every record is valid);
    /// [`SitesFileError::NoSites`] and [`SitesFileError::NoActiveSites`] as the text format.
    pub fn parse(bytes: &[u8]) -> Result<Self, SitesFileError> {
        if bytes.len() < PACKED_HEADER_BYTES {
            return Err(bad(format!(
                "{} bytes is shorter than the {PACKED_HEADER_BYTES}-byte header",
                bytes.len()
            )));
        }
        if bytes[..4] != PACKED_MAGIC {
            return Err(bad("the file does not start with `SADP`"));
        }
        let version = word(bytes, 4);
        if version != PACKED_VERSION {
            return Err(bad(format!(
                "format version {version}; this build reads version {PACKED_VERSION}"
            )));
        }
        let (width, height) = (word(bytes, 8), word(bytes, 12));
        if !(1..=MAX_SIDE).contains(&width) || !(1..=MAX_SIDE).contains(&height) {
            return Err(bad(format!(
                "image size {width}×{height} is not between 1 and 65535 on a side"
            )));
        }
        let count = word(bytes, 16) as usize;
        let body = bytes.len() - PACKED_HEADER_BYTES;
        if body as u128 != count as u128 * PACKED_SITE_BYTES as u128 {
            return Err(bad(format!(
                "the header declares {count} sites ({} bytes) but {body} bytes follow it; is it truncated?",
                count as u128 * PACKED_SITE_BYTES as u128
            )));
        }
        let mut ranges = [[0f32; 2]; 6];
        for (i, range) in ranges.iter_mut().enumerate() {
            let at = 20 + 8 * i;
            *range = [
                f32::from_bits(word(bytes, at)),
                f32::from_bits(word(bytes, at + 4)),
            ];
            check_range(*range, RANGED[i])?;
        }
        if bytes[68..PACKED_HEADER_BYTES].iter().any(|&b| b != 0) {
            return Err(bad("the reserved header bytes 68–79 are not 0"));
        }
        if count == 0 {
            return Err(SitesFileError::NoSites);
        }
        let records: Vec<[u32; 4]> = bytes[PACKED_HEADER_BYTES..]
            .chunks_exact(PACKED_SITE_BYTES)
            .map(|chunk| std::array::from_fn(|w| word(chunk, 4 * w)))
            .collect();
        if records
            .iter()
            .all(|record| get(from_words(record), INACTIVE) != 0)
        {
            return Err(SitesFileError::NoActiveSites(records.len()));
        }
        Ok(Self {
            width,
            height,
            ranges: PackedRanges::from_order(ranges),
            records,
        })
    }
}

/// A range the decoder can use: finite, a non-negative scale, and every value it decodes to
/// within the column's limit, as the text format's (a radius's low end at least 0).
fn check_range(
    [min, scale]: [f32; 2],
    (column, name, field): (usize, &str, (u32, u32)),
) -> Result<(), SitesFileError> {
    let limit = COLUMN_LIMITS[FILE_COLUMN[column]];
    // The largest value a record decodes to, which f32 rounding may put just past min + scale.
    let max = from_unorm(levels(field) as u32, [min, scale], levels(field));
    if !(min.is_finite() && scale.is_finite() && max.is_finite()) || scale < 0.0 {
        return Err(bad(format!(
            "the {name} range (min {min}, scale {scale}) is not a finite, non-negative span"
        )));
    }
    if min.abs() > limit || max.abs() > limit {
        return Err(bad(format!(
            "the {name} range [{min}, {max}] is outside ±{limit} (the render would overflow to NaN)"
        )));
    }
    if column == RADIUS && min < 0.0 {
        return Err(bad(format!("the radius range starts below 0 ({min})")));
    }
    Ok(())
}

/// The record of an active site (its inactive bit stays 0).
fn pack_site(
    site: &[f32; SITE_PARAMS],
    width: usize,
    height: usize,
    ranges: &PackedRanges,
) -> [u32; 4] {
    let position = |value: f32, side: usize| {
        let max = (side - 1) as f32;
        unorm(value.clamp(0.0, max), [0.0, max], levels(X))
    };
    let mut record = put(0, X, position(site[POSITION], width));
    record = put(record, Y, position(site[POSITION + 1], height));
    for ((column, _, field), range) in RANGED.into_iter().zip(ranges.in_order()) {
        record = put(record, field, unorm(site[column], range, levels(field)));
    }
    record = put(
        record,
        ANGLE,
        pack_angle(site[DIRECTION], site[DIRECTION + 1]),
    );
    to_words(record)
}

fn unpack_site(
    record: &[u32; 4],
    width: u32,
    height: u32,
    ranges: &PackedRanges,
) -> [f32; SITE_PARAMS] {
    let record = from_words(record);
    if get(record, INACTIVE) != 0 {
        return INACTIVE_SITE;
    }
    let field = |field, range| from_unorm(get(record, field), range, levels(field));
    let mut site = [0f32; SITE_PARAMS];
    site[POSITION] = field(X, [0.0, (width - 1) as f32]);
    site[POSITION + 1] = field(Y, [0.0, (height - 1) as f32]);
    for ((column, _, ranged), range) in RANGED.into_iter().zip(ranges.in_order()) {
        site[column] = field(ranged, range);
    }
    (site[DIRECTION], site[DIRECTION + 1]) = unpack_angle(get(record, ANGLE));
    site
}

/// `table` as the packed file stores it: every site packed and read back (what
/// `sad render --packed` draws).
///
/// # Errors
/// As [`PackedSites::pack`].
pub fn quantise_sites(table: &SiteTable) -> Result<SiteTable, SitesFileError> {
    Ok(PackedSites::pack(table)?.unpack())
}

#[cfg(test)]
mod tests;
