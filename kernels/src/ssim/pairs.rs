//! How a unit of the 2D kernels' pass across writes its two neighbouring output pixels.

use cubecl::prelude::*;

/// How the pass across stores the values of each unit's two neighbouring pixels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PairWrites {
    /// Each unit stores its own two pixels: a warp's store covers every other pixel of 64, so
    /// each 32-byte sector is written twice, half by each store.
    #[default]
    Direct,
    /// The plane first trades values by shuffles, so that each store of a plane writes the
    /// neighbouring pixels of half its units, lane by lane: full sectors. Needs plane
    /// operations; the pixels' indices travel with the values, so the lanes' order does not
    /// matter.
    Shuffled,
}

/// Which of a unit's values [`write_pair`] stores: pixel `q`'s value of map `k` is
/// `values[q · stride + first + k]`, for the `count` maps `k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PairValues {
    /// Map 0's value of pixel 0.
    pub first: usize,
    /// Values from pixel 0's to pixel 1's.
    pub stride: usize,
    /// Maps stored.
    pub count: usize,
}

/// Stores pixel `q`'s values of map `k` (`pair` says where they are in `values`) at
/// `output[k · total + index + q]` for the two pixels `q` whose bit is set in `valid`, as
/// `writes` says. `index` is pixel 0's index in a map. Every unit of the cube must call this
/// (shuffles).
#[cube]
pub fn write_pair<F: Float, O: Float>(
    output: &mut Tensor<O>,
    values: &Array<F>,
    index: usize,
    valid: u32,
    total: usize,
    #[comptime] pair: PairValues,
    #[comptime] writes: PairWrites,
) {
    let first = comptime![pair.first];
    let stride = comptime![pair.stride];
    let count = comptime![pair.count];
    if comptime![writes == PairWrites::Direct] {
        #[unroll]
        for q in 0..2usize {
            if (valid >> comptime![q as u32]) & 1 == 1 {
                #[unroll]
                for k in 0..count {
                    output[k * total + index + q] =
                        O::cast_from(values[comptime![q * stride + first + k]]);
                }
            }
        }
    } else {
        let lane = UNIT_POS_PLANE;
        let q = lane % 2;
        #[unroll]
        for half in 0..2u32 {
            // Lane `lane` stores pixel `q` of the unit `half · PLANE_DIM / 2 + lane / 2` of
            // its plane (in the lanes' numbering).
            let source = half * (PLANE_DIM / 2) + lane / 2;
            let at = plane_shuffle(index as u32, source) as usize;
            let ok = plane_shuffle(valid, source);
            #[unroll]
            for k in 0..count {
                let v0 = plane_shuffle(values[comptime![first + k]], source);
                let v1 = plane_shuffle(values[comptime![stride + first + k]], source);
                let mut v = v0;
                if q == 1 {
                    v = v1;
                }
                if (ok >> q) & 1 == 1 {
                    output[k * total + at + q as usize] = O::cast_from(v);
                }
            }
        }
    }
}
