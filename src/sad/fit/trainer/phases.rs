//! The phases of a training iteration that are more than one op: candidate propagation, the
//! gradient pass, Adam's step sizes, host-side densification and pruning.

use burn::tensor::Tensor;
use burn_sad_kernels::sad::{ADAM_STATE, AdamStep, StatisticsKind};

use super::{TAU_DIFFUSION_LAMBDA, Trainer};
use crate::sad::fit::densify::{split_candidates, split_sites};
use crate::sad::fit::ops::{prune_sites, removal_deltas, site_statistics, squared_error_gradients};
use crate::sad::sites::upload_contiguous;
use crate::sad::{Candidates, HilbertOrder, PropagationOptions, SiteTable, render_with};
use crate::ssim::{SsimOptions, fused_ssim};

impl Trainer {
    /// The PSNR after iteration `it` if it is a measuring one (every `log_every` and the last).
    pub(super) fn measured_psnr(&self, it: usize) -> Option<f64> {
        let log_every = self.options.log_every.max(1);
        let last = self.iteration == self.options.config.default_iters;
        (it.is_multiple_of(log_every) || last).then(|| self.psnr())
    }

    /// The tau diffusion weight of iteration `it`: it ramps up from a tenth of
    /// [`TAU_DIFFUSION_LAMBDA`].
    pub(super) fn diffusion_lambda(&self, it: usize) -> f32 {
        let progress = it as f32 / self.options.config.default_iters.max(1) as f32;
        TAU_DIFFUSION_LAMBDA * (0.1 + 0.9 * progress)
    }

    pub(super) fn propagate(&mut self, candidates: &mut Candidates, passes: usize) {
        let live = self.sites.clone().narrow(0, 0, self.allocated);
        if self.hilbert.as_ref().map(|h| h.1) != Some(self.allocated) {
            let (width, height) = (self.geometry.width, self.geometry.height);
            let table = SiteTable::from_tensor(live.clone(), width, height);
            let order = HilbertOrder::of(&table, width, height, &live.device());
            self.hilbert = Some((order, self.allocated));
        }
        let config = &self.options.config;
        let options = PropagationOptions {
            inject: config.cand_inject_count as u32,
            hilbert_probes: config.cand_hilbert_probes as u32,
            hilbert_window: config.cand_hilbert_window as u32,
        };
        let (hilbert, _) = self.hilbert.as_ref().expect("built above");
        for _ in 0..passes {
            candidates.propagate(&live, hilbert, options);
        }
    }

    /// ∂L/∂sites, `[capacity, 10]`, summed over pixels, and with `removal` the removal delta of
    /// the squared error per site.
    pub(super) fn gradients(&self, removal: bool) -> (Tensor<2>, Option<Tensor<1>>) {
        if self.options.ssim_weight == 0.0 {
            return squared_error_gradients(
                &self.sites,
                &self.candidates,
                &self.target_tensor,
                removal,
                self.options.backward,
            );
        }
        let removal =
            removal.then(|| removal_deltas(&self.sites, &self.candidates, &self.target_tensor));
        let tracked = self.sites.clone().autodiff().require_grad();
        let size = [self.geometry.height, self.geometry.width];
        let image = render_with(tracked.clone(), &self.candidates, self.options.backward);
        let error = image.clone() - self.target_tensor.clone();
        let mut loss = (error.clone() * error).sum();
        let ssim = fused_ssim(
            image.unsqueeze::<4>(),
            self.target_tensor.clone().unsqueeze::<4>(),
            SsimOptions::default(),
        );
        let pixels = (size[0] * size[1]) as f32;
        let weight = self.options.ssim_weight * pixels;
        loss = loss + ssim.neg().add_scalar(1.0).mul_scalar(weight);
        let grads = loss.backward();
        let grads = tracked.grad(&grads).expect("the sites are tracked").inner();
        (grads, removal)
    }

    pub(super) fn adam_parameters(&self, t: usize) -> AdamStep {
        let config = &self.options.config;
        let scale = self.options.lr_scale;
        let t = t as f32;
        AdamStep {
            lr_position: config.lr_pos_base * scale,
            lr_log_tau: config.lr_tau_base * scale,
            lr_radius: config.lr_radius_base * scale,
            lr_color: config.lr_color_base * scale,
            lr_direction: config.lr_dir_base * scale,
            lr_log_aniso: config.lr_aniso_base * scale,
            beta1: config.beta1,
            beta2: config.beta2,
            eps: config.eps,
            correction1: 1.0 / (1.0 - config.beta1.powf(t)),
            correction2: 1.0 / (1.0 - config.beta2.powf(t)),
            grad_scale: 1.0 / (self.geometry.width * self.geometry.height) as f32,
            max_x: (self.geometry.width - 1) as f32,
            max_y: (self.geometry.height - 1) as f32,
        }
    }

    pub(super) fn densify(&mut self, splits: usize) {
        let stats = site_statistics(
            &self.sites,
            &self.candidates,
            &self.target_tensor,
            StatisticsKind::Densify,
        )
        .try_to_vec_as::<f32>()
        .expect("statistics are readable");
        let device = self.sites.device();
        let (width, height) = (self.geometry.width, self.geometry.height);
        let mut table = SiteTable::from_tensor(self.sites.clone(), width, height);
        let parents = split_candidates(
            &table.sites,
            &stats,
            self.options.config.densify_score_alpha,
            splits,
        );
        let mut state: Vec<[f32; ADAM_STATE]> = self
            .state
            .clone()
            .try_to_vec_as::<f32>()
            .expect("state is readable")
            .chunks_exact(ADAM_STATE)
            .map(|row| row.try_into().expect("rows"))
            .collect();
        assert!(
            self.allocated + splits <= self.slots,
            "densify at {} + {splits} overruns the {} slots the schedule predicted",
            self.allocated,
            self.slots
        );
        split_sites(
            &mut table.sites,
            &mut state,
            &parents,
            &stats,
            &self.target,
            self.allocated,
        );
        self.sites = table.to_tensor(self.slots, &device);
        self.state = upload_contiguous(state.concat(), [self.slots, ADAM_STATE], &device);
        // The reference counts the planned splits even where a parent had too few candidates.
        self.allocated += splits;
        self.active_estimate += splits;
    }

    pub(super) fn prune(&mut self, removal: Tensor<1>, count: usize) {
        // The reference normalises by the pixels its mask keeps.
        let norm = 1.0 / self.target.counted_pixels().max(1) as f32;
        self.sites = prune_sites(self.sites.clone(), removal, count, norm);
        self.active_estimate = self.active_estimate.saturating_sub(count);
    }
}
