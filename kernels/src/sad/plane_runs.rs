//! Plane (warp) sums before the tile hash: neighbouring lanes usually add to the same site in
//! the same step, so a run of consecutive lanes holding one site first sums its contributions
//! with shuffles and only the run's last lane adds the total to the table. That replaces up to
//! a run's worth of conflicting shared-memory atomics on one entry by a few shuffles per
//! channel.

use cubecl::prelude::*;

use super::table_sums::TableSums;
use super::tile_hash::{FREE, TileHash, accumulate};

/// How the backward finds the runs of lanes that add to one site before its table adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlaneSums {
    /// No plane sums: every live lane adds its own contribution to the table.
    Off,
    /// Runs found with shuffles alone: a vote on whether the plane has any, a max-scan of the
    /// runs' first lanes (five shuffle steps on a 32-lane plane) and a plane maximum of their
    /// lengths, which bounds the doubling steps of the sums.
    Scan,
    /// Runs found from one ballot of the lanes that start a run: a lane's run starts at the
    /// highest such lane at or below it (a count of leading zeros), ends before the next one,
    /// and the doubling steps go on while the ballot still holds a stretch of continuing lanes
    /// as long as the step (uniform integer operations, no shuffle). Planes wider than 32 lanes
    /// (one ballot word) take [`Scan`](PlaneSums::Scan).
    Ballot,
}

/// [`accumulate`] for a whole plane at once, with its runs found as `runs` says (not
/// [`PlaneSums::Off`]): every unit of the plane must call it, with its site's `id`, or [`FREE`]
/// where the lane adds nothing. Planes without any run add lane by lane.
#[cube]
pub fn accumulate_plane<F: Float>(
    hash: &TileHash<F>,
    out: &mut Tensor<Atomic<F>>,
    id: u32,
    contribution: &Array<F>,
    #[comptime] channels: usize,
    #[comptime] sums: TableSums,
    #[comptime] runs: PlaneSums,
) {
    let live = id != FREE;
    let site = id as usize;
    let before = plane_shuffle_up(id, 1u32);
    let mut totals = Array::<F>::new(channels);
    #[unroll]
    for c in 0..channels {
        totals[c] = contribution[c];
    }
    // Whether this lane adds `totals` to the table: every live lane that is not inside a
    // summed run. A uniform branch: every lane of the plane takes the same one.
    let adds = if comptime![runs == PlaneSums::Ballot] && PLANE_DIM <= 32 {
        sum_runs_from_ballot::<F>(live, id, before, &mut totals, channels)
    } else {
        sum_runs_by_scan::<F>(live, id, before, &mut totals, channels)
    };
    // One call for every case, so that all adding lanes run the same copy of the adds.
    if adds {
        accumulate::<F>(hash, out, site, &totals, channels, sums);
    }
}

/// [`PlaneSums::Scan`]: sums each run of lanes holding one site `id` (`before` is the previous
/// lane's) into `totals` of the run's last lane; returns whether this lane adds to the table.
#[cube]
fn sum_runs_by_scan<F: Float>(
    live: bool,
    id: u32,
    before: u32,
    totals: &mut Array<F>,
    #[comptime] channels: usize,
) -> bool {
    let lane = UNIT_POS_PLANE;
    let mut adds = live;
    // A uniform decision: every lane of the plane must take the same branch, as the branch
    // shuffles.
    if plane_any(live && lane > 0 && before == id) {
        let after = plane_shuffle_down(id, 1u32);
        let last = lane + 1 == PLANE_DIM || after != id;
        // First lane of this lane's run: a max-scan of the runs' head lanes.
        let mut start = if lane == 0 || before != id {
            lane
        } else {
            0u32
        };
        let mut delta = 1u32;
        while delta < PLANE_DIM {
            let seen = plane_shuffle_up(start, delta);
            if lane >= delta {
                start = u32::max(start, seen);
            }
            delta *= 2;
        }
        // Segmented inclusive sum: the run's last lane ends up with the run's total. Only as
        // many doubling steps as the plane's longest run needs: where sites are dense, runs are
        // 2–4 lanes long and one or two steps of `channels` shuffles do instead of five.
        let run = if live { lane + 1 - start } else { 1u32 };
        let longest = plane_max(run);
        delta = 1u32;
        while delta < longest {
            add_from_lane_below::<F>(totals, lane >= start + delta, delta, channels);
            delta *= 2;
        }
        adds = live && last;
    }
    adds
}

/// [`PlaneSums::Ballot`] on a plane of at most 32 lanes: the same sums as
/// [`sum_runs_by_scan`], with the runs read off one ballot.
#[cube]
fn sum_runs_from_ballot<F: Float>(
    live: bool,
    id: u32,
    before: u32,
    totals: &mut Array<F>,
    #[comptime] channels: usize,
) -> bool {
    let lane = UNIT_POS_PLANE;
    // A lane starts a run unless it is live and holds the previous lane's site; a lane that
    // is not live is a run of its own (of nothing), so runs hold live lanes only.
    let heads = plane_ballot(lane == 0 || !live || before != id).extract(0usize);
    // The plane's lanes as bits (PLANE_DIM ≤ 32 here); shifts stay under 32.
    let lanes = u32::MAX >> (32 - PLANE_DIM);
    // Bit i: lane i continues the run of lane i − 1. The same word in every lane.
    let continuing = heads ^ lanes;
    let mut adds = live;
    if continuing != 0 {
        // The run's first lane: the highest head at or below this lane (lane 0 always is one).
        let heads_up_to_lane = heads & (u32::MAX >> (31 - lane));
        let start = 31 - heads_up_to_lane.leading_zeros();
        // The run's last lane: the plane ends or the next lane starts a run.
        let next_head = (heads >> u32::min(lane + 1, 31)) & 1;
        let last = lane + 1 == PLANE_DIM || next_head == 1;
        // Segmented inclusive sum, as the scan's. Bit i of `stretch` says that lanes
        // i … i + delta − 1 all continue runs: a run of n lanes needs a step of `delta` while
        // delta < n, so the steps go on while some run still holds such a stretch.
        let mut stretch = continuing;
        let mut delta = 1u32;
        while stretch != 0 {
            add_from_lane_below::<F>(totals, lane >= start + delta, delta, channels);
            stretch &= stretch >> delta;
            delta *= 2;
        }
        adds = live && last;
    }
    adds
}

/// One doubling step of a segmented sum: every lane reads `totals` of the lane `delta` below
/// it (all lanes must call this) and adds them where `take`.
#[cube]
fn add_from_lane_below<F: Float>(
    totals: &mut Array<F>,
    take: bool,
    delta: u32,
    #[comptime] channels: usize,
) {
    #[unroll]
    for c in 0..channels {
        let other = plane_shuffle_up(totals[c], delta);
        if take {
            totals[c] += other;
        }
    }
}
