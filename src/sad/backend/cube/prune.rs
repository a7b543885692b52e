//! Launch of the device-side prune: a radix select of the cheapest sites to remove.

use burn::backend::ops::IntTensorOps;
use burn::tensor::{IntDType, Shape};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::sad::{
    RADIX_BINS, RadixDigit, SELECT_STATE, SITE_PARAMS, prune_choose_kernel, prune_histogram_kernel,
    prune_mark_kernel, prune_start_kernel,
};
use cubecl::{CubeCount, CubeDim};

use super::{capacity, empty_f32, site_grid};

/// Marks the `count` cheapest sites inactive with a radix select on the device (see the kernels'
/// `prune` module): 8-bit digits of the key, then of as many id bits as the capacity needs.
pub(super) fn prune(sites: CubeTensor, removal: CubeTensor, count: usize, norm: f32) -> CubeTensor {
    let sites = into_contiguous(sites);
    let sites_count = capacity(&sites);
    if count == 0 || sites_count == 0 {
        return sites;
    }
    let removal = into_contiguous(removal);
    let out = empty_f32(&sites, Shape::new([sites_count, SITE_PARAMS]));
    let (count_sites, dim) = site_grid(sites_count);
    let client = &sites.client;
    let words = |n: usize| CubeBackend::int_zeros(Shape::new([n]), &sites.device, IntDType::U32);
    let state = words(SELECT_STATE);
    let histogram = words(RADIX_BINS);
    let one_cube = (
        CubeCount::Static(1, 1, 1),
        CubeDim::new_1d(RADIX_BINS as u32),
    );
    prune_start_kernel::launch(
        client,
        one_cube.0.clone(),
        one_cube.1,
        state.clone().into_tensor_arg(),
        histogram.clone().into_tensor_arg(),
        count.min(u32::MAX as usize) as u32,
    );
    // Digits of the key, most significant first, then of the id.
    let id_bits = usize::BITS - (sites_count - 1).leading_zeros();
    let mut digits: Vec<(u32, u32)> = [24, 16, 8, 0].map(|shift| (0, shift)).to_vec();
    digits.extend((0..id_bits.div_ceil(8)).rev().map(|byte| (1, 8 * byte)));
    for (word, shift) in digits {
        // The bits above this digit, already chosen.
        let above = |bits: u32| if bits >= 32 { 0 } else { u32::MAX << bits };
        let (key_mask, id_mask) = if word == 0 {
            (above(shift + 8), 0)
        } else {
            (u32::MAX, above(shift + 8))
        };
        prune_histogram_kernel::launch(
            client,
            count_sites.clone(),
            dim,
            sites.clone().into_tensor_arg(),
            removal.clone().into_tensor_arg(),
            state.clone().into_tensor_arg(),
            histogram.clone().into_tensor_arg(),
            norm,
            sites_count,
            RadixDigit {
                word,
                shift,
                key_mask,
                id_mask,
            }
            .launch_arg(),
        );
        prune_choose_kernel::launch(
            client,
            one_cube.0.clone(),
            one_cube.1,
            state.clone().into_tensor_arg(),
            histogram.clone().into_tensor_arg(),
            word,
            shift,
        );
    }
    prune_mark_kernel::launch(
        client,
        count_sites,
        dim,
        sites.clone().into_tensor_arg(),
        removal.into_tensor_arg(),
        state.into_tensor_arg(),
        out.clone().into_tensor_arg(),
        norm,
        sites_count,
    );
    out
}
