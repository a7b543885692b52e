//! Compiling (or loading) every kernel of an iteration before the timed loop.

use burn_sad_kernels::sad::StatisticsKind;

use super::{TAU_DIFFUSION_PASSES, Trainer};
use crate::sad::fit::capture_gate::DeviceShare;
use crate::sad::fit::ops::site_statistics;
use crate::sad::fit::step::diffuse_and_step_keeping;

impl Trainer {
    /// Runs every kernel of an iteration once on the current buffers and discards the results,
    /// so that just-in-time compilation happens before a timed run (the reference's timings
    /// exclude its module loading too).
    pub fn warm_up(&self) {
        let _share = DeviceShare::take();
        let mut candidates = self.candidates.clone();
        let mut scratch = self.clone();
        scratch.profile = None;
        scratch.propagate(&mut candidates, 1);
        let (_, removal) = scratch.gradients(true);
        let (grads, _) = scratch.gradients(false);
        drop(site_statistics(
            &scratch.sites,
            &scratch.candidates,
            &scratch.target_tensor,
            StatisticsKind::Densify,
        ));
        if let Some(removal) = removal {
            scratch.prune(removal, 1);
        }
        let step = scratch.adam_parameters(1);
        // Twice: finding the diffusion's neighbours, then reusing them (another kernel).
        let mut kept = None;
        for _ in 0..2 {
            let (sites, _, lists) = diffuse_and_step_keeping(
                scratch.sites.clone(),
                &candidates,
                grads.clone(),
                scratch.state.clone(),
                &step,
                (0.01, TAU_DIFFUSION_PASSES),
                kept.as_ref(),
            );
            scratch.sites = sites;
            kept = lists;
        }
        // And the kernels of a replayed iteration, recording (and replaying) a graph of the
        // scratch copy's own.
        scratch.tau_lists = kept;
        if scratch.tau_lists.is_some() {
            scratch.replay_step(0);
            scratch.replay_step(1);
        }
        let _ = scratch.active_sites();
        let _ = scratch.psnr();
        let _ = self.sites.device().sync();
    }
}
