//! Cloning a trainer, which needs its own copies of the buffers a replay works on in place.

use super::Trainer;
use super::replay::Replayer;
use crate::sad::fit::step::NeighbourLists;

impl Clone for Trainer {
    /// A trainer of its own: while this one works on the replay's buffers, the clone gets
    /// copies of them, which this one's replays leave alone.
    fn clone(&self) -> Self {
        let (sites, state, tau_lists) = match &self.replayer {
            Replayer::Ready {
                replay,
                loaded: true,
            } => {
                let (sites, state, lists) = replay.detached();
                (sites, state, Some(NeighbourLists(lists)))
            }
            _ => (
                self.sites.clone(),
                self.state.clone(),
                self.tau_lists.clone(),
            ),
        };
        Self {
            target: self.target.clone(),
            target_tensor: self.target_tensor.clone(),
            options: self.options.clone(),
            schedule: self.schedule,
            budget: self.budget,
            geometry: self.geometry,
            sites,
            state,
            candidates: self.candidates.clone(),
            pending: self.pending.clone(),
            tau_lists,
            hilbert: self.hilbert.clone(),
            allocated: self.allocated,
            slots: self.slots,
            active_estimate: self.active_estimate,
            iteration: self.iteration,
            per_pixel: self.per_pixel,
            profile: self.profile.clone(),
            replayer: self.replayer.clone(),
            replayed: self.replayed,
        }
    }
}
