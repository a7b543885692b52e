//! Tests of the bits-per-pixel budget and the schedule it solves for.

use super::*;

#[test]
fn capacity_is_the_configured_one_or_the_reference_rule() {
    let mut config = TrainingConfig {
        default_max_sites: 5000,
        ..TrainingConfig::default()
    };
    assert_eq!(Schedule::new(&config, 300, 64, 64).capacity, 5000);
    assert_eq!(
        Schedule::new(&config, 9000, 64, 64).capacity,
        9000,
        "never below initial"
    );
    config.default_max_sites = 0;
    // min(2·W·H, max(8·initial, 8192)).
    assert_eq!(Schedule::new(&config, 300, 64, 64).capacity, 8192);
    assert_eq!(Schedule::new(&config, 300, 40, 40).capacity, 3200);
    assert_eq!(Schedule::new(&config, 2000, 512, 512).capacity, 16_000);
}

fn schedule(iters: usize, initial: usize, capacity: usize, rates: (f32, f32)) -> Schedule {
    Schedule {
        iters,
        initial_sites: initial,
        capacity,
        densify_start: 20,
        densify_end: 3000,
        densify_freq: 20,
        densify_rate: rates.0,
        prune_start: 100,
        prune_end: iters.saturating_sub(1).min(3000),
        prune_freq: 40,
        prune_rate: rates.1,
    }
}

#[test]
fn visiting_only_events_gives_the_replayed_counts() {
    for iters in [0, 1, 21, 99, 100, 101, 140, 2999, 3001, 4000, 9000] {
        for (initial, capacity) in [(300, 300), (300, 4000), (5000, 128_000), (1, 10)] {
            for rates in [
                (0.0, 0.0),
                (0.01, 0.0),
                (0.0, 0.033),
                (0.02, 0.05),
                (0.5, 0.9),
            ] {
                let s = schedule(iters, initial, capacity, rates);
                let every_iteration = s.replay_every_iteration();
                assert_eq!(s.final_sites(), every_iteration.active, "{s:?}");
                assert_eq!(s.peak_slots(initial), every_iteration.allocated, "{s:?}");
                assert!(s.peak_slots(initial) <= capacity.max(initial), "{s:?}");
            }
        }
    }
}

#[test]
fn the_solver_does_not_replay_every_iteration() {
    // 10⁸ iterations with pruning to the end: replaying each iteration ~120 times would take
    // minutes; the event walk stops once pruning rounds to zero sites.
    let mut s = schedule(100_000_000, 300, 300, (0.01, 0.033));
    s.prune_end = s.iters - 1;
    let solution = solve_target_bpp(4.0, 64, 64, &s);
    assert!(solution.final_sites >= 1, "{solution:?}");
}
