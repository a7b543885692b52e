//! The body of the `image_decoder` fuzz target, shared with the stable test suite
//! (`tests/it/fuzz_bodies.rs`): the decoder `sad` reads photos with, on arbitrary bytes, returns
//! RGB planes of the declared size or a one-line error, never a panic, and never an allocation
//! beyond the size limit (a 256-pixel limit here, so that a declared size cannot make the fuzzer
//! run out of memory).

use burn_sad::image::decode_rgb;

/// Panics where the decoder breaks its contract on `data`.
pub fn check(data: &[u8]) {
    match decode_rgb(data, 256) {
        Ok(image) => {
            assert!(image.width <= 256 && image.height <= 256);
            assert_eq!(image.planar.len(), 3 * image.width * image.height);
            assert!(image.planar.iter().all(|v| (0.0..=1.0).contains(v)));
        }
        Err(error) => assert!(!error.to_string().contains('\n')),
    }
}
