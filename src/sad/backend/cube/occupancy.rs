//! The backward kernel's occupancy on CUDA.
//!
//! At 60 registers per unit, the backward fits 4 cubes of 256 units on a multiprocessor of the
//! H200, and the tiles of a photo under a megapixel make 1–3 waves of cubes, the last one partly
//! full (a 451×300 image's 551 tiles: a full wave of 528 cubes and a tail of 23). Asking the
//! compiler for more cubes per multiprocessor (`.minnctapersm`, through the patched cubecl-llvm
//! in `vendor/`, the `cuda-hints` feature) caps the registers (5 cubes: 48, 6: 40) and can save
//! that wave, but each cube then runs slower (fewer registers, some spilled), so it pays only
//! where it removes a wave, or where there are many waves and the extra warps hide latency. At 6
//! cubes the fixed-point sums spill, so the policy picks 4 or 5. The measurements behind it are
//! in `benches/RESULTS.md` ("Measurements behind the kernels' choices").

use burn_cubecl::tensor::CubeTensor;

/// Cubes of 256 units per multiprocessor that the backward gets without a hint (60 registers).
#[cfg_attr(not(feature = "cuda-hints"), allow(dead_code))]
const UNHINTED_CUBES: u32 = 4;

/// Waves (at [`UNHINTED_CUBES`]) from which the backward asks for 5 cubes whatever the tail.
#[cfg_attr(not(feature = "cuda-hints"), allow(dead_code))]
const MANY_WAVES: u32 = 8;

/// The cubes per multiprocessor the backward kernel is compiled for on `tensor`'s runtime, for
/// a launch of `grid_cubes` cubes: 0 (no hint) off CUDA. On a CUDA device: 5 where the grid makes
/// [`MANY_WAVES`] waves or more, else the fewer of 4 and 5 cubes
/// that gives the fewest waves (0 for 4). Decided once per process, by its first launch (the
/// compiler's hint is global, and the launch passes the value as a compile-time argument so the
/// kernel cache keeps kernels of different hints apart): `sad fit` fits one image a process.
pub(super) fn backward_cubes_per_sm(tensor: &CubeTensor, grid_cubes: u32) -> u32 {
    #[cfg(feature = "cuda-hints")]
    if crate::runtime::capabilities::Capabilities::of(tensor).nvptx {
        use std::sync::OnceLock;
        static CUBES: OnceLock<u32> = OnceLock::new();
        return *CUBES.get_or_init(|| {
            let multiprocessors = tensor
                .client
                .properties()
                .hardware
                .num_streaming_multiprocessors;
            let cubes =
                multiprocessors.map_or(0, |multiprocessors| by_waves(grid_cubes, multiprocessors));
            cubecl_llvm::nvptx::occupancy::set_min_cubes_per_sm("render_backward_kernel", cubes);
            cubes
        });
    }
    let _ = (tensor, grid_cubes);
    0
}

/// The policy of [`backward_cubes_per_sm`] for `grid_cubes` cubes on `multiprocessors`.
#[cfg_attr(not(feature = "cuda-hints"), allow(dead_code))]
fn by_waves(grid_cubes: u32, multiprocessors: u32) -> u32 {
    let waves = |cubes: u32| grid_cubes.div_ceil(multiprocessors.max(1) * cubes);
    if waves(UNHINTED_CUBES) >= MANY_WAVES {
        return 5;
    }
    let best = [UNHINTED_CUBES, 5]
        .into_iter()
        .min_by_key(|&cubes| (waves(cubes), cubes))
        .unwrap_or(UNHINTED_CUBES);
    if best == UNHINTED_CUBES { 0 } else { best }
}

#[cfg(test)]
mod tests {
    use super::by_waves;

    #[test]
    fn picks_the_hint_that_saves_a_wave() {
        // H200: 132 multiprocessors. 451×300, 600×400, 512², 741×500, 1920×1080 tiles.
        assert_eq!(by_waves(551, 132), 5);
        assert_eq!(by_waves(950, 132), 0);
        assert_eq!(by_waves(1024, 132), 0);
        assert_eq!(by_waves(1504, 132), 0);
        assert_eq!(by_waves(1536, 132), 0);
        assert_eq!(by_waves(8160, 132), 5);
    }
}
