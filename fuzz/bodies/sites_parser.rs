//! The body of the `sites_parser` fuzz target, shared with the stable test suite
//! (`tests/it/fuzz_bodies.rs`): the sites file parsers (the `*_sites.txt` text, and the packed
//! `*_sites.sadp` for bytes that start with its magic) on arbitrary bytes return a table or a
//! one-line error, never panic; a table they return is written back in its format and read
//! again unchanged.

use burn_sad::sad::{PackedSites, SitesFormat, parse_sites_bytes, sites_to_string};

/// Panics where a parser breaks its contract on `data`.
pub fn check(data: &[u8]) {
    // Text the fuzzer made invalid UTF-8 is still worth parsing as text.
    let text_view;
    let bytes = match SitesFormat::of_bytes(data) {
        SitesFormat::Packed => data,
        SitesFormat::Text => {
            text_view = String::from_utf8_lossy(data).into_owned().into_bytes();
            &text_view
        }
    };
    match parse_sites_bytes(bytes) {
        Ok(table) => {
            assert!(table.sites.iter().flatten().all(|v| v.is_finite()));
            let written = sites_to_string(&table);
            let again = parse_sites_bytes(written.as_bytes()).expect("a written table parses");
            assert_eq!(sites_to_string(&again), written);
            if SitesFormat::of_bytes(data) == SitesFormat::Packed {
                // The records survive a read and a write (inactive ones aside, which the
                // writer leaves out, and the ranges, which it recomputes).
                let parsed = PackedSites::parse(data).expect("parsed once");
                let repacked = PackedSites::pack(&table).expect("a read table packs");
                assert_eq!(repacked.records.len(), table.active());
                assert_eq!(
                    (repacked.width, repacked.height),
                    (parsed.width, parsed.height)
                );
            }
        }
        Err(error) => assert!(!error.to_string().contains('\n')),
    }
}
