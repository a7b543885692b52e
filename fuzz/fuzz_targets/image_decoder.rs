//! The image decoder `sad` reads photos with, on arbitrary bytes: RGB planes of the declared
//! size or a one-line error, never a panic, and never an allocation beyond the size limit (a
//! 256-pixel limit here, so that a declared size cannot make the fuzzer run out of memory).
#![no_main]

use burn_sad::image::decode_rgb;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match decode_rgb(data, 256) {
        Ok(image) => {
            assert!(image.width <= 256 && image.height <= 256);
            assert_eq!(image.planar.len(), 3 * image.width * image.height);
            assert!(image.planar.iter().all(|v| (0.0..=1.0).contains(v)));
        }
        Err(error) => assert!(!error.to_string().contains('\n')),
    }
});
