//! Whether the test device runs the kernels: on the `vulkan` feature this compiles the probe
//! kernel with the linked `cubecl-spirv` (this workspace's patched copy) and must find it right,
//! also on lavapipe, which lacks explicit workgroup layout.

use crate::common::device;

#[test]
fn the_test_device_runs_the_kernels() {
    burn_sad::device::kernel_support(&device()).expect("a device the kernels run on");
}
