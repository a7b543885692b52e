//! The reference trainer's configuration: `training_config.json`'s keys and defaults.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::FitError;

/// Every key of the reference's `training_config.json`, with the shipped values as defaults.
///
/// Read with [`TrainingConfig::from_json`] or [`TrainingConfig::load`]: a missing key keeps its
/// default, an unknown key or a value out of range is an error.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields, rename_all = "SCREAMING_SNAKE_CASE")]
pub struct TrainingConfig {
    /// Sites placed by the gradient-weighted initialisation.
    pub default_sites: usize,
    /// Site-buffer capacity; densification splits sites only while below it.
    pub default_max_sites: usize,
    /// Training iterations.
    pub default_iters: usize,
    /// Bits-per-pixel budget (128 bits per site); ≤ 0 turns the solver off.
    pub default_target_bpp: f64,
    /// Share of the active sites pruned per prune event (replaced by the budget solver).
    pub prune_percentile: f32,
    /// Whether pruning may start before densification ends.
    pub prune_during_densify: bool,
    /// First prune iteration.
    pub prune_start: usize,
    /// Iterations between prune events.
    pub prune_freq: usize,
    /// Prune events happen before this iteration (0: until the last iteration).
    pub prune_end: usize,
    /// First densify iteration.
    pub densify_start: usize,
    /// Iterations between densify events.
    pub densify_freq: usize,
    /// Last densify iteration (inclusive).
    pub densify_end: usize,
    /// Share of the active sites split per densify event (replaced by the budget solver).
    pub densify_percentile: f32,
    /// Exponent of the mass in the densify score energy / mass^α.
    pub densify_score_alpha: f32,
    /// Iterations between candidate propagation passes (0: never).
    pub cand_update_freq: usize,
    /// Propagation passes per update.
    pub cand_update_passes: usize,
    /// Reach of the random radius probes (only used with `cand_radius_probes` > 0).
    pub cand_radius_scale: f32,
    /// Random radius probes per pass. Only 0 is supported, as in the shipped config.
    pub cand_radius_probes: usize,
    /// Pixels per candidate cell along each axis.
    pub cand_downscale: usize,
    /// Random sites injected per cell and pass.
    pub cand_inject_count: usize,
    /// Half-width of the Hilbert probe window.
    pub cand_hilbert_window: usize,
    /// Hilbert probes per cell and pass.
    pub cand_hilbert_probes: usize,
    /// Adam learning rate of positions.
    pub lr_pos_base: f32,
    /// Adam learning rate of log τ.
    pub lr_tau_base: f32,
    /// Adam learning rate of radii.
    pub lr_radius_base: f32,
    /// Adam learning rate of colours.
    pub lr_color_base: f32,
    /// Adam learning rate of directions.
    pub lr_dir_base: f32,
    /// Adam learning rate of log anisotropy.
    pub lr_aniso_base: f32,
    /// log τ of new sites.
    pub init_log_tau: f32,
    /// Radius of new sites, in pixels.
    pub init_radius: f32,
    /// Adam β1.
    pub beta1: f32,
    /// Adam β2.
    pub beta2: f32,
    /// Adam ε.
    pub eps: f32,
    /// Largest accepted image side.
    pub max_dim: usize,
}

impl Default for TrainingConfig {
    fn default() -> Self {
        Self {
            default_sites: 128_000,
            default_max_sites: 128_000,
            default_iters: 4000,
            default_target_bpp: 1.0,
            prune_percentile: 0.033,
            prune_during_densify: true,
            prune_start: 100,
            prune_freq: 40,
            prune_end: 3000,
            densify_start: 20,
            densify_freq: 20,
            densify_end: 3000,
            densify_percentile: 0.01,
            densify_score_alpha: 0.7,
            cand_update_freq: 8,
            cand_update_passes: 1,
            cand_radius_scale: 64.0,
            cand_radius_probes: 0,
            cand_downscale: 1,
            cand_inject_count: 4,
            cand_hilbert_window: 32,
            cand_hilbert_probes: 1,
            lr_pos_base: 0.025,
            lr_tau_base: 0.01,
            lr_radius_base: 0.01,
            lr_color_base: 0.01,
            lr_dir_base: 0.0025,
            lr_aniso_base: 0.025,
            init_log_tau: 5.0,
            init_radius: 4.0,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            max_dim: 12_000,
        }
    }
}

/// The largest bits-per-pixel budget: 2 sites per pixel (the most a site buffer holds) at
/// [`BITS_PER_SITE`](super::BITS_PER_SITE) bits each.
pub const MAX_TARGET_BPP: f64 = 256.0;

impl TrainingConfig {
    /// Parses and validates a `training_config.json` document.
    pub fn from_json(text: &str) -> Result<Self, FitError> {
        let document: serde_json::Value =
            serde_json::from_str(text).map_err(|error| FitError::Config(error.to_string()))?;
        // Serde would fill the keys of a struct from an array by position.
        if !document.is_object() {
            return Err(FitError::Config(
                "a training config must be a JSON object of \"KEY\": value pairs".into(),
            ));
        }
        let config: Self = serde_json::from_value(document)
            .map_err(|error| FitError::Config(error.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// Reads, parses and validates a `training_config.json` file.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, FitError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|error| {
            FitError::Config(format!("cannot read {}: {error}", path.display()))
        })?;
        Self::from_json(&text).map_err(|error| match error {
            FitError::Config(message) => FitError::Config(format!("{}: {message}", path.display())),
            other => other,
        })
    }

    /// Checks every value's range; the error names the key.
    pub fn validate(&self) -> Result<(), FitError> {
        let bad = |key: &str, why: &str| Err(FitError::Config(format!("{key} {why}")));
        let unit = |value: f32| (0.0..1.0).contains(&value);
        let positive = |value: f32| value.is_finite() && value > 0.0;
        if self.default_sites == 0 {
            return bad("DEFAULT_SITES", "must be at least 1");
        }
        if self.default_iters == 0 {
            return bad("DEFAULT_ITERS", "must be at least 1");
        }
        if !self.default_target_bpp.is_finite() {
            return bad("DEFAULT_TARGET_BPP", "must be a finite number");
        }
        if self.default_target_bpp > MAX_TARGET_BPP {
            return bad(
                "DEFAULT_TARGET_BPP",
                "must be at most 256 (2 sites per pixel at 128 bits per site)",
            );
        }
        for (key, value) in [
            ("PRUNE_PERCENTILE", self.prune_percentile),
            ("DENSIFY_PERCENTILE", self.densify_percentile),
        ] {
            if !unit(value) {
                return bad(key, "must be in [0, 1)");
            }
        }
        for (key, value) in [
            ("PRUNE_FREQ", self.prune_freq),
            ("DENSIFY_FREQ", self.densify_freq),
            ("CAND_DOWNSCALE", self.cand_downscale),
            ("MAX_DIM", self.max_dim),
        ] {
            if value == 0 {
                return bad(key, "must be at least 1");
            }
        }
        if self.cand_radius_probes != 0 {
            return bad(
                "CAND_RADIUS_PROBES",
                "must be 0: random radius probes are not implemented",
            );
        }
        for (key, value) in [
            ("LR_POS_BASE", self.lr_pos_base),
            ("LR_TAU_BASE", self.lr_tau_base),
            ("LR_RADIUS_BASE", self.lr_radius_base),
            ("LR_COLOR_BASE", self.lr_color_base),
            ("LR_DIR_BASE", self.lr_dir_base),
            ("LR_ANISO_BASE", self.lr_aniso_base),
            ("INIT_RADIUS", self.init_radius),
            ("EPS", self.eps),
            ("CAND_RADIUS_SCALE", self.cand_radius_scale),
        ] {
            if !positive(value) {
                return bad(key, "must be a positive number");
            }
        }
        if !self.densify_score_alpha.is_finite() || self.densify_score_alpha < 0.0 {
            return bad("DENSIFY_SCORE_ALPHA", "must be a non-negative number");
        }
        if !self.init_log_tau.is_finite() {
            return bad("INIT_LOG_TAU", "must be a finite number");
        }
        for (key, value) in [("BETA1", self.beta1), ("BETA2", self.beta2)] {
            if !unit(value) {
                return bad(key, "must be in [0, 1)");
            }
        }
        Ok(())
    }

    /// The largest side a fit trains at: MAX_DIM, within what the kernels index
    /// ([`KERNEL_MAX_SIDE`](super::KERNEL_MAX_SIDE)). Larger photos are scaled down to it.
    pub fn effective_max_dim(&self) -> usize {
        self.max_dim.min(super::KERNEL_MAX_SIDE)
    }

    /// The first prune iteration the schedule allows.
    pub fn effective_prune_start(&self) -> usize {
        if !self.prune_during_densify && self.prune_start < self.densify_end {
            self.densify_end
        } else {
            self.prune_start
        }
    }

    /// Prune events happen before this iteration.
    pub fn effective_prune_end(&self, iters: usize) -> usize {
        if self.prune_end > 0 {
            self.prune_end
        } else {
            iters.saturating_sub(1)
        }
    }
}
