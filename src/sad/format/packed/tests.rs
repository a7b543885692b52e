//! Tests of the packed format: round trips within each field's step, and bad files.

use super::*;
use crate::sad::{parse_sites, parse_sites_bytes, sites_to_string};

/// A table of `count` sites spread over `width × height`, with every field varied (xorshift).
fn table(count: usize, width: usize, height: usize) -> SiteTable {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let sites = (0..count)
        .map(|_| {
            let angle = next() * 7.0 - 3.5;
            [
                next() * (width - 1) as f32,
                next() * (height - 1) as f32,
                2.0 + next() * 7.0,
                next() * 3.0,
                next() * 1.4 - 0.2,
                next(),
                next() * 1.2,
                angle.cos(),
                angle.sin(),
                next() * 6.0 - 3.0,
            ]
        })
        .collect();
    SiteTable {
        width,
        height,
        sites,
    }
}

/// Half a step of each field's quantisation for `ranges` (memory order), the direction's in
/// radians.
fn half_steps(ranges: &PackedRanges, width: usize, height: usize) -> [f32; SITE_PARAMS] {
    let step = |[_, scale]: [f32; 2], field| 0.5 * scale / levels(field) + 1e-6;
    let mut steps = [0f32; SITE_PARAMS];
    steps[POSITION] = step([0.0, (width - 1) as f32], X);
    steps[POSITION + 1] = step([0.0, (height - 1) as f32], Y);
    steps[LOG_TAU] = step(ranges.log_tau, TAU);
    steps[RADIUS] = step(ranges.radius, RAD);
    steps[COLOR] = step(ranges.colour[0], RED);
    steps[COLOR + 1] = step(ranges.colour[1], GREEN);
    steps[COLOR + 2] = step(ranges.colour[2], BLUE);
    steps[DIRECTION] = 0.5 * std::f32::consts::PI / 65536.0 + 1e-6;
    steps[LOG_ANISO] = step(ranges.log_aniso, ANISO);
    steps
}

fn assert_within_steps(original: &SiteTable, back: &SiteTable, ranges: &PackedRanges) {
    assert_eq!((back.width, back.height), (original.width, original.height));
    assert_eq!(back.sites.len(), original.sites.len());
    let steps = half_steps(ranges, original.width, original.height);
    for (i, (a, b)) in original.sites.iter().zip(&back.sites).enumerate() {
        for column in [
            POSITION,
            POSITION + 1,
            LOG_TAU,
            RADIUS,
            COLOR,
            COLOR + 1,
            COLOR + 2,
            LOG_ANISO,
        ] {
            // Half a step, and the f32 decode's rounding.
            let tolerance = steps[column] + 4.0 * f32::EPSILON * a[column].abs();
            assert!(
                (a[column] - b[column]).abs() <= tolerance,
                "site {i} column {column}: {} against {} (half step {})",
                a[column],
                b[column],
                steps[column]
            );
        }
        // The direction as a line (u and −u are one), compared by angle.
        let cross = a[DIRECTION] * b[DIRECTION + 1] - a[DIRECTION + 1] * b[DIRECTION];
        assert!(
            cross.abs() <= steps[DIRECTION],
            "site {i}: direction off by {cross}"
        );
    }
}

#[test]
fn text_to_packed_to_text_keeps_every_site_within_its_step() {
    for (width, height) in [(64, 64), (1000, 872), (3840, 2160), (1, 7)] {
        let original = table(500, width, height);
        let packed = PackedSites::pack(&original).expect("packs");
        let bytes = packed.to_bytes();
        assert_eq!(
            bytes.len(),
            PACKED_HEADER_BYTES + PACKED_SITE_BYTES * original.sites.len()
        );
        let back = parse_sites_bytes(&bytes).expect("reads back");
        assert_within_steps(&original, &back, &packed.ranges);
        // Through text and back: the text format holds the unpacked values exactly.
        let text = parse_sites(&sites_to_string(&back)).expect("text");
        assert_eq!(text, back);
    }
}

#[test]
fn packing_what_was_unpacked_changes_no_field_by_more_than_one_step() {
    let original = table(300, 640, 480);
    let once = quantise_sites(&original).expect("packs");
    let twice = PackedSites::pack(&once).expect("packs again");
    assert_within_steps(&once, &twice.unpack(), &twice.ranges);
}

#[test]
fn inactive_sites_are_left_out_and_positions_clamped_into_the_image() {
    let mut original = table(4, 32, 16);
    original.sites[1] = INACTIVE_SITE;
    original.sites[2][POSITION] = 40.0;
    original.sites[2][POSITION + 1] = -0.0;
    let back = quantise_sites(&original).expect("packs");
    assert_eq!(back.sites.len(), 3);
    assert_eq!(back.sites[1][POSITION], 31.0);
    assert_eq!(back.sites[1][POSITION + 1], 0.0);
}

#[test]
fn a_record_with_the_inactive_bit_reads_as_an_inactive_slot() {
    let mut packed = PackedSites::pack(&table(2, 8, 8)).expect("packs");
    packed.records[0][3] |= 1 << 31;
    let back = PackedSites::parse(&packed.to_bytes())
        .expect("one active site is enough")
        .unpack();
    assert_eq!(back.sites[0], INACTIVE_SITE);
    assert_eq!(back.active(), 1);
    packed.records[1][3] |= 1 << 31;
    assert_eq!(
        PackedSites::parse(&packed.to_bytes()),
        Err(SitesFileError::NoActiveSites(2))
    );
}

#[test]
fn tables_that_cannot_be_packed_say_why() {
    let mut sizeless = table(3, 8, 8);
    sizeless.width = 0;
    let error = PackedSites::pack(&sizeless).unwrap_err().to_string();
    assert!(error.contains("image size"), "{error}");
    let too_wide = SiteTable {
        width: 70_000,
        ..table(3, 8, 8)
    };
    let error = PackedSites::pack(&too_wide).unwrap_err().to_string();
    assert!(error.contains("65535"), "{error}");
    // log τ = 80 is the text format's limit; the packed step may decode a little past it, so
    // the writer refuses what its reader would.
    let mut at_limit = table(3, 8, 8);
    at_limit.sites[0][LOG_TAU] = 80.0;
    at_limit.sites[1][LOG_TAU] = -80.0;
    if let Err(error) = PackedSites::pack(&at_limit) {
        assert!(error.to_string().contains("log_tau range"), "{error}");
    } else {
        let bytes = PackedSites::pack(&at_limit).unwrap().to_bytes();
        let back = parse_sites_bytes(&bytes).expect("what is written reads back");
        parse_sites(&sites_to_string(&back)).expect("and passes the text format's limits");
    }
}

/// The bytes of a small valid file, and `edit` applied to them.
fn edited(edit: impl FnOnce(&mut Vec<u8>)) -> Result<PackedSites, SitesFileError> {
    let mut bytes = PackedSites::pack(&table(3, 16, 16))
        .expect("packs")
        .to_bytes();
    edit(&mut bytes);
    PackedSites::parse(&bytes)
}

fn put_word(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

/// A change to a file's bytes.
type Edit = dyn FnOnce(&mut Vec<u8>);

#[test]
fn bad_packed_files_get_one_line_errors() {
    let cases: Vec<(&str, Box<Edit>)> = vec![
        (
            "shorter than the 80-byte header",
            Box::new(|b| b.truncate(40)),
        ),
        ("does not start with `SADP`", Box::new(|b| b[0] = b'X')),
        ("format version 2", Box::new(|b| put_word(b, 4, 2))),
        ("image size 0×16", Box::new(|b| put_word(b, 8, 0))),
        ("image size 16×70000", Box::new(|b| put_word(b, 12, 70_000))),
        ("truncated", Box::new(|b| b.truncate(b.len() - 5))),
        ("declares 4 sites", Box::new(|b| put_word(b, 16, 4))),
        (
            "declares 4294967295 sites",
            Box::new(|b| put_word(b, 16, u32::MAX)),
        ),
        (
            "log_tau range (min NaN",
            Box::new(|b| put_word(b, 20, f32::NAN.to_bits())),
        ),
        (
            "radius range (min 0, scale inf)",
            Box::new(|b| {
                put_word(b, 28, 0);
                put_word(b, 32, f32::INFINITY.to_bits())
            }),
        ),
        ("scale -1", Box::new(|b| put_word(b, 48, (-1f32).to_bits()))),
        (
            "log_tau range [100",
            Box::new(|b| put_word(b, 20, 100f32.to_bits())),
        ),
        (
            "radius range starts below 0",
            Box::new(|b| put_word(b, 28, (-2f32).to_bits())),
        ),
        ("reserved header bytes", Box::new(|b| b[75] = 1)),
        (
            "log_anisotropy range [-90",
            Box::new(|b| put_word(b, 60, (-90f32).to_bits())),
        ),
    ];
    for (expected, edit) in cases {
        let error = edited(edit).expect_err(expected).to_string();
        assert!(
            error.contains(expected) && !error.contains('\n'),
            "expected `{expected}` in `{error}`"
        );
    }
    assert_eq!(
        edited(|b| {
            b.truncate(PACKED_HEADER_BYTES);
            put_word(b, 16, 0)
        }),
        Err(SitesFileError::NoSites)
    );
}

#[test]
fn bytes_that_are_neither_format_say_so() {
    let error = parse_sites_bytes(b"# Image size: 4 4\n\xff\xfe").unwrap_err();
    assert_eq!(error.to_string().lines().count(), 1);
    assert!(error.to_string().contains("line 2"), "{error}");
}
