//! The step clock of a replayed iteration, which the training launches read λ and the bias
//! corrections from instead of their step's arguments.

use burn::backend::TensorMetadata;
use burn_cubecl::tensor::CubeTensor;
use burn_sad_kernels::sad::CLOCK_COLUMNS;

use crate::runtime::launch::{expect_contiguous, expect_len_at_least};

/// The step clock of a replayed iteration (see `burn_sad_kernels::sad::clock_value`): the
/// `[rows, CLOCK_COLUMNS]` f32 table and the u32 tick naming the row of this iteration.
pub(super) struct Clock {
    pub table: CubeTensor,
    pub tick: CubeTensor,
}

impl Clock {
    /// Panics unless the table is whole rows in one dimension and the tick one value.
    #[track_caller]
    pub(super) fn expect_shapes(&self, op: &str) {
        let table = self.table.shape();
        assert!(
            table.num_dims() == 1 && table[0].is_multiple_of(CLOCK_COLUMNS),
            "{op}: the clock table is {:?}, expected [rows × {CLOCK_COLUMNS}]",
            table.as_slice()
        );
        expect_len_at_least(op, "the clock tick", &self.tick, 1);
        expect_contiguous(op, "the clock tick", &self.tick);
    }

    /// The clock buffers and `clocked` for a launch: a clock's own, or `unread_f32` and
    /// `unread_u32` (any buffers; a launch without a clock reads neither).
    pub(super) fn bind(
        clock: Option<&Clock>,
        unread_f32: &CubeTensor,
        unread_u32: &CubeTensor,
    ) -> (CubeTensor, CubeTensor, bool) {
        match clock {
            Some(clock) => (clock.table.clone(), clock.tick.clone(), true),
            None => (unread_f32.clone(), unread_u32.clone(), false),
        }
    }
}
