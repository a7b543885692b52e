//! The `*_sites.txt` parser on arbitrary text (the body: `fuzz/bodies/sites_parser.rs`).
#![no_main]

#[path = "../bodies/sites_parser.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::check(data));
