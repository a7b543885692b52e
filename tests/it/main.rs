//! Every integration test of burn-sad in one binary (one link per feature set instead of one per
//! file): `cargo test --test it`, or a module's tests by their path, for example
//! `cargo test --test it -- ssim:: sad_render::`. The device is `$BURN_SAD_DEVICE`'s (see
//! `common::device`).

mod common;

mod devices;
mod fuzz_bodies;
mod sad_candidates;
mod sad_files;
mod sad_fit;
mod sad_mask;
mod sad_render;
mod sad_replay;
mod sad_step;
mod sad_views;
mod sad_zoom;
mod ssim;
mod ssim3d;
mod ssim_data_range;
mod ssim_dtypes;
mod ssim_losses;
mod ssim_memory;
mod ssim_reductions;
mod ssim_window_masks;
mod vendor_patches;
