//! The body of the `sites_parser` fuzz target, shared with the stable test suite
//! (`tests/it/fuzz_bodies.rs`): the `*_sites.txt` parser on arbitrary text returns a table or a
//! one-line error, never panics; a table it returns is written back and read again unchanged.

use burn_sad::sad::{parse_sites, sites_to_string};

/// Panics where the parser breaks its contract on `data`.
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match parse_sites(&text) {
        Ok(table) => {
            assert!(table.sites.iter().flatten().all(|v| v.is_finite()));
            let written = sites_to_string(&table);
            let again = parse_sites(&written).expect("a written table parses");
            assert_eq!(sites_to_string(&again), written);
        }
        Err(error) => assert!(!error.to_string().contains('\n')),
    }
}
