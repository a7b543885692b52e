//! The `sad` command's tests, in one binary: `cargo test -p burn-sad-cli`, or a module's tests by
//! their path, for example `cargo test -p burn-sad-cli -- cli_dataset::`. They run the binary as a
//! user would, on `$BURN_SAD_DEVICE`'s device (default: auto).

mod cli_support;

mod cli;
mod cli_dataset;
mod cli_edges;
mod cli_messages;
mod cli_packed;
mod cli_views;
#[cfg(feature = "wgpu")]
mod viewer;
