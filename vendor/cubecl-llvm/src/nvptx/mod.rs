//! NVPTX target.

pub mod abi;
pub mod builtins;
pub mod codegen;
pub mod libdevice;
pub mod matrix;
pub mod occupancy;
#[cfg(test)]
mod offline_tests;
pub mod plane;
pub mod plane_masks;
pub mod printf;
pub mod ptx_version;
pub mod synchronization;
