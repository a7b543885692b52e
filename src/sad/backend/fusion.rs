//! The SAD ops on `Fusion<B>`, queued on the fusion stream like the SSIM ops (see
//! `crate::fusion_op`).

use burn::tensor::{DType, Shape};
use burn_fusion::{Fusion, FusionBackend};
use burn_sad_kernels::sad::{
    ADAM_STATE, AdamStep, BackwardOutputs, K, StatisticsKind, ViewColours,
};

use super::{
    BackwardStrategy, PassConfig, RenderGeometry, SadBackend, SadKernels, SiteRecordKind,
    ViewTransform,
};
use crate::fusion_op::{Lazy, Mixed, float, floats, queue};

/// One int output.
fn int<F, I>(tensor: I) -> Mixed<F, I, 0, 1> {
    Mixed {
        floats: [],
        ints: [tensor],
    }
}

/// The stepped sites and state, and the diffusion's neighbour lists.
fn stepped_and_lists<F, I>((sites, state, lists): (F, F, I)) -> Mixed<F, I, 2, 1> {
    Mixed {
        floats: [sites, state],
        ints: [lists],
    }
}

/// The copied sites and state, lists, candidates and tick.
fn copied_state<F, I>(
    (sites, state, lists, candidates, tick): (F, F, I, I, I),
) -> Mixed<F, I, 2, 3> {
    Mixed {
        floats: [sites, state],
        ints: [lists, candidates, tick],
    }
}

fn ids_shape(geometry: RenderGeometry) -> (Shape, DType) {
    (Shape::new([geometry.cells(), K]), DType::I32)
}

/// The stepped sites and Adam state of `sites`' capacity.
fn stepped_shapes<B: FusionBackend>(sites: &Lazy<B>, state: &Lazy<B>) -> [(Shape, DType); 2] {
    [
        (sites.shape.clone(), sites.dtype),
        (Shape::new([sites.shape[0], ADAM_STATE]), state.dtype),
    ]
}

impl<B: FusionBackend + SadBackend> SadBackend for Fusion<B> {
    fn sad_render(
        sites: Lazy<B>,
        candidates: Lazy<B>,
        geometry: RenderGeometry,
        strategy: BackwardStrategy,
    ) -> Lazy<B> {
        let image = (
            Shape::new([3, geometry.height, geometry.width]),
            sites.dtype,
        );
        let [image] = queue!(format!("burn_sad::sad_render::{geometry:?}::{strategy}");
            floats [sites], ints [candidates] => [image], [];
            float(B::sad_render(sites, candidates, geometry, strategy)))
        .floats;
        image
    }

    fn sad_render_backward(
        sites: Lazy<B>,
        candidates: Lazy<B>,
        grad_image: Lazy<B>,
        geometry: RenderGeometry,
        strategy: BackwardStrategy,
    ) -> Lazy<B> {
        let grads = (sites.shape.clone(), sites.dtype);
        let [grads] = queue!(format!("burn_sad::sad_render_backward::{geometry:?}::{strategy}");
            floats [sites, grad_image], ints [candidates] => [grads], [];
            float(B::sad_render_backward(sites, candidates, grad_image, geometry, strategy)))
        .floats;
        grads
    }
}

impl<B: FusionBackend + SadKernels> SadKernels for Fusion<B> {
    fn sad_squared_error_gradients(
        sites: Lazy<B>,
        candidates: Lazy<B>,
        target: Lazy<B>,
        geometry: RenderGeometry,
        removal: bool,
        strategy: BackwardStrategy,
    ) -> Lazy<B> {
        let outputs = BackwardOutputs {
            from_target: true,
            removal,
        };
        let grads = (Shape::new([sites.shape[0], outputs.columns()]), sites.dtype);
        let [grads] = queue!(
        format!("burn_sad::sad_squared_error_gradients::{geometry:?}::{removal}::{strategy}");
        floats [sites, target], ints [candidates] => [grads], [];
        float(B::sad_squared_error_gradients(
            sites, candidates, target, geometry, removal, strategy
        )))
        .floats;
        grads
    }

    fn sad_init_candidates(sites: Lazy<B>, geometry: RenderGeometry, seed: u32) -> Lazy<B> {
        let [ids] = queue!(format!("burn_sad::sad_init_candidates::{geometry:?}::{seed}");
            floats [sites], ints [] => [], [ids_shape(geometry)];
            int(B::sad_init_candidates(sites, geometry, seed)))
        .ints;
        ids
    }

    fn sad_flood_candidates(records: Lazy<B>, geometry: RenderGeometry) -> Lazy<B> {
        let [ids] = queue!(format!("burn_sad::sad_flood_candidates::{geometry:?}");
            floats [], ints [records] => [], [ids_shape(geometry)];
            int(B::sad_flood_candidates(records, geometry)))
        .ints;
        ids
    }

    fn sad_pack_sites(sites: Lazy<B>, kind: SiteRecordKind, view: ViewTransform) -> Lazy<B> {
        let packed = (Shape::new([sites.shape[0], kind.words()]), DType::U32);
        let [packed] = queue!(format!("burn_sad::sad_pack_sites::{kind:?}::{view:?}");
            floats [sites], ints [] => [], [packed];
            int(B::sad_pack_sites(sites, kind, view)))
        .ints;
        packed
    }

    fn sad_view_colours(
        sites: Lazy<B>,
        winners: Lazy<B>,
        colours: ViewColours,
        scale: (f32, f32),
    ) -> Lazy<B> {
        let image = (
            Shape::new([3, winners.shape[0], winners.shape[1]]),
            DType::F32,
        );
        let [image] = queue!(format!("burn_sad::sad_view_colours::{colours:?}::{scale:?}");
            floats [sites], ints [winners] => [image], [];
            float(B::sad_view_colours(sites, winners, colours, scale)))
        .floats;
        image
    }

    fn sad_mark_sites(records: Lazy<B>, image: Lazy<B>) -> Lazy<B> {
        let marked = (image.shape.clone(), DType::F32);
        let [marked] = queue!("burn_sad::sad_mark_sites".to_string();
            floats [image], ints [records] => [marked], [];
            float(B::sad_mark_sites(records, image)))
        .floats;
        marked
    }

    fn sad_render_records(
        records: Lazy<B>,
        candidates: Lazy<B>,
        geometry: RenderGeometry,
    ) -> Lazy<B> {
        let image = (Shape::new([3, geometry.height, geometry.width]), DType::F32);
        let [image] = queue!(format!("burn_sad::sad_render_records::{geometry:?}");
            floats [], ints [records, candidates] => [image], [];
            float(B::sad_render_records(records, candidates, geometry)))
        .floats;
        image
    }

    fn sad_winners(records: Lazy<B>, candidates: Lazy<B>, geometry: RenderGeometry) -> Lazy<B> {
        let winners = (Shape::new([geometry.height, geometry.width]), DType::I32);
        let [winners] = queue!(format!("burn_sad::sad_winners::{geometry:?}");
            floats [], ints [records, candidates] => [], [winners];
            int(B::sad_winners(records, candidates, geometry)))
        .ints;
        winners
    }

    fn sad_candidate_pass(
        packed: Lazy<B>,
        candidates: Lazy<B>,
        hilbert_order: Lazy<B>,
        hilbert_rank: Lazy<B>,
        geometry: RenderGeometry,
        pass: PassConfig,
    ) -> Lazy<B> {
        let [ids] = queue!(format!("burn_sad::sad_candidate_pass::{geometry:?}::{pass:?}");
        floats [], ints [packed, candidates, hilbert_order, hilbert_rank]
            => [], [ids_shape(geometry)];
        int(B::sad_candidate_pass(
            packed, candidates, hilbert_order, hilbert_rank, geometry, pass,
        )))
        .ints;
        ids
    }

    fn sad_site_statistics(
        sites: Lazy<B>,
        candidates: Lazy<B>,
        target: Lazy<B>,
        geometry: RenderGeometry,
        kind: StatisticsKind,
    ) -> Lazy<B> {
        let stats = (Shape::new([sites.shape[0], kind.channels()]), sites.dtype);
        let [stats] = queue!(format!("burn_sad::sad_site_statistics::{geometry:?}::{kind:?}");
            floats [sites, target], ints [candidates] => [stats], [];
            float(B::sad_site_statistics(sites, candidates, target, geometry, kind)))
        .floats;
        stats
    }

    fn sad_tau_diffusion(
        sites: Lazy<B>,
        candidates: Lazy<B>,
        raw: Lazy<B>,
        geometry: RenderGeometry,
        lambda: f32,
        passes: u32,
    ) -> Lazy<B> {
        let out = (Shape::new([raw.shape[0]]), raw.dtype);
        let [out] = queue!(
            format!("burn_sad::sad_tau_diffusion::{geometry:?}::{lambda}::{passes}");
            floats [sites, raw], ints [candidates] => [out], [];
            float(B::sad_tau_diffusion(sites, candidates, raw, geometry, lambda, passes)))
        .floats;
        out
    }

    fn sad_prune(sites: Lazy<B>, removal: Lazy<B>, count: usize, norm: f32) -> Lazy<B> {
        let out = (sites.shape.clone(), sites.dtype);
        let [out] = queue!(format!("burn_sad::sad_prune::{count}::{norm}");
            floats [sites, removal], ints [] => [out], [];
            float(B::sad_prune(sites, removal, count, norm)))
        .floats;
        out
    }

    fn sad_diffuse_and_step(
        sites: Lazy<B>,
        candidates: Lazy<B>,
        grads: Lazy<B>,
        state: Lazy<B>,
        kept: Lazy<B>,
        use_kept: bool,
        step: AdamStep,
        geometry: RenderGeometry,
        lambda: f32,
        passes: u32,
    ) -> (Lazy<B>, Lazy<B>, Lazy<B>) {
        let [stepped, moments] = stepped_shapes::<B>(&sites, &state);
        let lists = (Shape::new([K + 1, sites.shape[0]]), DType::I32);
        let out = queue!(format!(
            "burn_sad::sad_diffuse_and_step::{step:?}::{geometry:?}::{lambda}::{passes}::{use_kept}"
        );
            floats [sites, grads, state], ints [candidates, kept] => [stepped, moments], [lists];
            stepped_and_lists(B::sad_diffuse_and_step(
                sites, candidates, grads, state, kept, use_kept, step, geometry, lambda, passes,
            )));
        let [sites, state] = out.floats;
        let [lists] = out.ints;
        (sites, state, lists)
    }

    fn sad_adam_step(
        sites: Lazy<B>,
        grads: Lazy<B>,
        tau_grads: Lazy<B>,
        state: Lazy<B>,
        step: AdamStep,
    ) -> (Lazy<B>, Lazy<B>) {
        let [stepped, moments] = stepped_shapes::<B>(&sites, &state);
        let [sites, state] = queue!(format!("burn_sad::sad_adam_step::{step:?}");
            floats [sites, grads, tau_grads, state], ints [] => [stepped, moments], [];
            floats(B::sad_adam_step(sites, grads, tau_grads, state, step)))
        .floats;
        (sites, state)
    }

    fn sad_step_in_place(
        sites: Lazy<B>,
        state: Lazy<B>,
        lists: Lazy<B>,
        candidates: Lazy<B>,
        target: Lazy<B>,
        clock: Lazy<B>,
        tick: Lazy<B>,
        step: AdamStep,
        geometry: RenderGeometry,
        passes: u32,
        strategy: BackwardStrategy,
    ) -> (Lazy<B>, Lazy<B>, Lazy<B>) {
        let shapes = [&sites, &state, &lists].map(|t| (t.shape.clone(), t.dtype));
        let [stepped, moments, kept] = shapes;
        let out = queue!(
            format!("burn_sad::sad_step_in_place::{step:?}::{geometry:?}::{passes}::{strategy}");
        floats [sites, state, target, clock], ints [lists, candidates, tick]
            => [stepped, moments], [kept];
        stepped_and_lists(B::sad_step_in_place(
            sites, state, lists, candidates, target, clock, tick, step, geometry, passes, strategy,
        )));
        let [sites, state] = out.floats;
        let [lists] = out.ints;
        (sites, state, lists)
    }

    fn sad_copy_state(
        sites: Lazy<B>,
        state: Lazy<B>,
        lists: Lazy<B>,
        candidates: Lazy<B>,
        sites_into: Lazy<B>,
        state_into: Lazy<B>,
        lists_into: Lazy<B>,
        candidates_into: Lazy<B>,
        tick: Lazy<B>,
        iteration: Option<u32>,
    ) -> (Lazy<B>, Lazy<B>, Lazy<B>, Lazy<B>, Lazy<B>) {
        let shape = |t: &Lazy<B>| (t.shape.clone(), t.dtype);
        let [sites_out, state_out] = [&sites_into, &state_into].map(shape);
        let [lists_out, candidates_out, tick_out] =
            [&lists_into, &candidates_into, &tick].map(shape);
        let out = queue!(format!("burn_sad::sad_copy_state::{iteration:?}");
        floats [sites, state, sites_into, state_into],
        ints [lists, candidates, lists_into, candidates_into, tick]
            => [sites_out, state_out], [lists_out, candidates_out, tick_out];
        copied_state(B::sad_copy_state(
            sites, state, lists, candidates, sites_into, state_into, lists_into,
            candidates_into, tick, iteration,
        )));
        let [sites, state] = out.floats;
        let [lists, candidates, tick] = out.ints;
        (sites, state, lists, candidates, tick)
    }
}
