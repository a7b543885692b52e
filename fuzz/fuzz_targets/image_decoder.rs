//! The photo decoder on arbitrary bytes (the body: `fuzz/bodies/image_decoder.rs`).
#![no_main]

#[path = "../bodies/image_decoder.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::check(data));
