//! Candidate lists (`[cells, K]` i32 ids) read and written in vectors: with vectors of 4 ids a
//! list is two 16-byte loads. Lists are 32 bytes apart, so a warp that reads them id by id
//! touches 32 sectors for 4 bytes of each, every load.

use cubecl::prelude::*;

use super::layout::K;

/// The [`K`] ids of `cell`'s list (`candidates` in vectors of `N`), loaded once.
#[cube]
pub fn cell_ids<N: Size>(candidates: &Tensor<Vector<i32, N>>, cell: usize) -> Array<i32> {
    let lanes = candidates.vector_size();
    let loads = comptime![K / lanes];
    let mut ids = Array::<i32>::new(K);
    #[unroll]
    for load in 0..loads {
        let vector = candidates[cell * loads + load];
        #[unroll]
        for lane in 0..lanes {
            ids[load * lanes + lane] = vector.extract(lane);
        }
    }
    ids
}

/// Lane `lane` (a runtime index) of `ids`, chosen by comparisons (a dynamic extract goes
/// through memory), so that a runtime loop can walk a vector a lane at a time.
#[cube]
pub fn lane_of<N: Size>(ids: Vector<i32, N>, lane: usize) -> i32 {
    let mut id = ids.extract(0usize);
    #[unroll]
    for i in 1..ids.vector_size() {
        if lane == i {
            id = ids.extract(i);
        }
    }
    id
}

/// Entries `first .. first + N` of `ids` as one vector, for a store of that width.
#[cube]
pub fn vector_of<N: Size>(ids: &Array<i32>, first: usize) -> Vector<i32, N> {
    let mut vector = Vector::<i32, N>::empty();
    #[unroll]
    for i in 0..vector.vector_size() {
        vector.insert(i, ids[first + i]);
    }
    vector
}
