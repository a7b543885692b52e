//! Candidate lists: which K sites each pixel blends, kept up to date as the sites move.

use burn::tensor::{Int, Tensor, TensorData};
use burn_sad_kernels::sad::{K, PACKED_WORDS};

#[cfg(feature = "cube")]
use super::PassConfig;
#[cfg(feature = "cube")]
use super::ViewTransform;
use super::reference::{exact_candidates, pack_sites_reference};
use super::{HilbertOrder, RenderGeometry, RenderReadySites, SiteTable};
#[cfg(feature = "cube")]
use crate::device::uses_fused_kernels;

/// How each propagation pass looks for new candidates besides its neighbours' lists (the
/// reference's `CAND_INJECT_COUNT`, `CAND_HILBERT_PROBES` and `CAND_HILBERT_WINDOW`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PropagationOptions {
    /// Random sites tried per cell and pass.
    pub inject: u32,
    /// Sites tried near the cell's best site along the Hilbert curve.
    pub hilbert_probes: u32,
    /// How far along the curve those probes reach, in positions.
    pub hilbert_window: u32,
}

impl Default for PropagationOptions {
    fn default() -> Self {
        Self {
            inject: 4,
            hilbert_probes: 1,
            hilbert_window: 32,
        }
    }
}

/// The jump of propagation pass `pass`: P/2, P/4, …, 1, then 1 for ever (P = the next power of
/// two ≥ the candidate grid's longer side), as the reference schedules it.
pub fn jump_for_pass(pass: u32, geometry: RenderGeometry) -> u32 {
    let top = geometry.cand_w().max(geometry.cand_h()).next_power_of_two() as u32;
    let stages = top.trailing_zeros().max(1);
    (top >> (pass.min(stages - 1) + 1)).max(1)
}

/// Candidate lists for one image geometry: `[cells, K]` site ids (−1 = empty), best first once
/// a propagation pass has run, plus the global pass counter that drives the jump schedule.
#[derive(Clone, Debug)]
pub struct Candidates {
    ids: Tensor<2, Int>,
    geometry: RenderGeometry,
    passes: u32,
}

impl Candidates {
    /// Wraps existing lists.
    ///
    /// # Panics
    /// If `ids` is not `[geometry.cells(), 8]`.
    pub fn from_ids(ids: Tensor<2, Int>, geometry: RenderGeometry) -> Self {
        assert_eq!(ids.dims(), [geometry.cells(), K], "candidate ids shape");
        Self {
            ids,
            geometry,
            passes: 0,
        }
    }

    /// The lists, `[cells, 8]`.
    pub fn ids(&self) -> Tensor<2, Int> {
        self.ids.clone()
    }

    /// The geometry they were built for.
    pub fn geometry(&self) -> RenderGeometry {
        self.geometry
    }

    /// Propagation passes run so far.
    pub fn passes(&self) -> u32 {
        self.passes
    }

    /// Exact lists computed on the host by brute force (see
    /// [`exact_candidates`](super::exact_candidates)).
    pub fn exact(sites: &Tensor<2>, geometry: RenderGeometry) -> Self {
        let table = SiteTable::from_tensor(sites.clone(), geometry.width, geometry.height);
        let ids = exact_candidates(&table.sites, geometry);
        let ids = Tensor::from_data(TensorData::new(ids, [geometry.cells(), K]), &sites.device());
        Self::from_ids(ids, geometry)
    }

    /// The training initialisation: hashed random ids from `seed`, with every active site
    /// written into its own cell. Where CubeCL kernels cannot run, the exact lists.
    pub fn random(sites: &Tensor<2>, geometry: RenderGeometry, seed: u32) -> Self {
        #[cfg(feature = "cube")]
        if uses_fused_kernels(&sites.device()) {
            return Self::from_ids(dispatch::init(sites.clone(), geometry, seed), geometry);
        }
        let _ = seed;
        Self::exact(sites, geometry)
    }

    /// The render-only initialisation: a jump flood from every site's own cell. Run at least one
    /// propagation pass before rendering. Where CubeCL kernels cannot run, the exact lists.
    pub fn flood(sites: &Tensor<2>, geometry: RenderGeometry) -> Self {
        Self::flood_ready(&RenderReadySites::new(sites.clone()), geometry)
    }

    /// [`Candidates::flood`] from sites whose records are packed already (the flood ranks from
    /// the full records, as the render does).
    fn flood_ready(sites: &RenderReadySites, geometry: RenderGeometry) -> Self {
        #[cfg(feature = "cube")]
        if let Some(records) = sites.records() {
            return Self::from_ids(dispatch::flood(records.clone(), geometry), geometry);
        }
        Self::exact(sites.sites(), geometry)
    }

    /// The ranking copy of `sites` that propagation ranks from, `[capacity, 8]` u32 words, each
    /// the bits of an f32: x, y, direction x, y, e^a, 1/e^a, radius and τ, where
    /// position, direction, radius, log τ and log anisotropy are first rounded to f16 as the
    /// reference's 16-byte packed copy rounds them, so the keys are the reference's; inactive
    /// sites at x = y = [`DEAD_X`](burn_sad_kernels::sad::DEAD_X) and zeros. Where CubeCL
    /// kernels cannot run, packed on the host. Read the words back with `as u32` (a backend's
    /// int type may hold them as signed values).
    pub fn packed(sites: &Tensor<2>) -> Tensor<2, Int> {
        #[cfg(feature = "cube")]
        if uses_fused_kernels(&sites.device()) {
            return dispatch::pack(sites.clone(), ViewTransform::IDENTITY);
        }
        let table = SiteTable::from_tensor(sites.clone(), 0, 0);
        let words = pack_sites_reference(&table.sites);
        let shape = [table.sites.len(), PACKED_WORDS];
        // The words' bits, as the i32 every int type can hold (read back with `as u32`).
        let words: Vec<i32> = words.into_iter().map(|word| word as i32).collect();
        Tensor::from_data(TensorData::new(words, shape), &sites.device())
    }

    /// One propagation pass at the scheduled jump. Where CubeCL kernels cannot run, the lists
    /// are recomputed exactly instead.
    pub fn propagate(
        &mut self,
        sites: &Tensor<2>,
        hilbert: &HilbertOrder,
        options: PropagationOptions,
    ) {
        #[cfg(feature = "cube")]
        if uses_fused_kernels(&sites.device()) {
            let packed = dispatch::pack(sites.clone(), ViewTransform::IDENTITY);
            self.propagate_packed(&packed, hilbert, options);
            return;
        }
        let _ = (hilbert, options);
        self.passes += 1;
        self.ids = Self::exact(sites, self.geometry).ids;
    }

    /// A propagation pass ranking from `packed`, the ranking copy of the sites.
    #[cfg(feature = "cube")]
    fn propagate_packed(
        &mut self,
        packed: &Tensor<2, Int>,
        hilbert: &HilbertOrder,
        options: PropagationOptions,
    ) {
        let pass = PassConfig {
            jump: jump_for_pass(self.passes, self.geometry),
            pass: self.passes,
            inject: options.inject,
            hilbert_probes: options.hilbert_probes,
            hilbert_window: options.hilbert_window,
        };
        self.passes += 1;
        self.ids = dispatch::pass(
            packed.clone(),
            self.ids.clone(),
            hilbert,
            self.geometry,
            pass,
        );
    }

    /// Lists for rendering saved sites, as the reference's render-only mode builds them: a jump
    /// flood, then `passes` propagation passes (16 in the reference).
    pub fn for_render(
        sites: &Tensor<2>,
        geometry: RenderGeometry,
        passes: u32,
        options: PropagationOptions,
    ) -> Self {
        let table = SiteTable::from_tensor(sites.clone(), geometry.width, geometry.height);
        let hilbert = HilbertOrder::of(&table, geometry.width, geometry.height, &sites.device());
        let ready = RenderReadySites::new(sites.clone());
        let built = Self::flood_and_propagate(&ready, geometry, &hilbert, passes, options, |_| {
            Ok::<(), std::convert::Infallible>(())
        });
        match built {
            Ok(candidates) => candidates,
        }
    }

    /// [`Candidates::for_render`] of sites made ready for rendering (the flood reads the records
    /// the renders read), with the Hilbert order given (the reference builds it outside its
    /// timed region) and `after_step(done)` called after the flood (`done` = 1) and after each
    /// pass (2 ..= passes + 1); an error from it stops the build. Where CubeCL kernels cannot
    /// run, the flood already gives the exact lists, so the passes only count.
    pub fn flood_and_propagate<E>(
        ready: &RenderReadySites,
        geometry: RenderGeometry,
        hilbert: &HilbertOrder,
        passes: u32,
        options: PropagationOptions,
        mut after_step: impl FnMut(u32) -> Result<(), E>,
    ) -> Result<Self, E> {
        let mut candidates = Self::flood_ready(ready, geometry);
        after_step(1)?;
        #[cfg(feature = "cube")]
        if uses_fused_kernels(&ready.sites().device()) {
            // The sites do not change between passes: one ranking copy serves them all.
            let packed = dispatch::pack(ready.sites().clone(), ready.view());
            for pass in 0..passes {
                candidates.propagate_packed(&packed, hilbert, options);
                after_step(pass + 2)?;
            }
            return Ok(candidates);
        }
        let _ = (hilbert, options);
        for pass in 0..passes {
            candidates.passes += 1;
            after_step(pass + 2)?;
        }
        Ok(candidates)
    }
}

/// The candidate kernels through Burn's dispatch backend.
#[cfg(feature = "cube")]
mod dispatch {
    use burn::backend::Dispatch;
    use burn::tensor::{Int, Tensor};

    use super::super::{
        PassConfig, RenderGeometry, SadCandidateKernels, SiteRecordKind, ViewTransform,
    };
    use crate::sad::HilbertOrder;
    use crate::sad::backend::KernelCall;

    pub fn init(sites: Tensor<2>, geometry: RenderGeometry, seed: u32) -> Tensor<2, Int> {
        let call = KernelCall::on(&sites.device());
        call.out(<Dispatch as SadCandidateKernels>::sad_init_candidates(
            KernelCall::arg(sites),
            geometry,
            seed,
        ))
    }

    pub fn flood(records: Tensor<2, Int>, geometry: RenderGeometry) -> Tensor<2, Int> {
        let call = KernelCall::on(&records.device());
        call.out(<Dispatch as SadCandidateKernels>::sad_flood_candidates(
            KernelCall::arg(records),
            geometry,
        ))
    }

    pub fn pack(sites: Tensor<2>, view: ViewTransform) -> Tensor<2, Int> {
        let call = KernelCall::on(&sites.device());
        call.out(<Dispatch as SadCandidateKernels>::sad_pack_sites(
            KernelCall::arg(sites),
            SiteRecordKind::Ranking,
            view,
        ))
    }

    pub fn pass(
        packed: Tensor<2, Int>,
        ids: Tensor<2, Int>,
        hilbert: &HilbertOrder,
        geometry: RenderGeometry,
        pass: PassConfig,
    ) -> Tensor<2, Int> {
        let call = KernelCall::on(&packed.device());
        call.out(<Dispatch as SadCandidateKernels>::sad_candidate_pass(
            KernelCall::arg(packed),
            KernelCall::arg(ids),
            KernelCall::arg(hilbert.order.clone()),
            KernelCall::arg(hilbert.rank.clone()),
            geometry,
            pass,
        ))
    }
}
