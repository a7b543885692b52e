//! The SAD ops on `Fusion<B>`, queued on the fusion stream like the SSIM ops (see
//! `crate::fusion_op`).

use burn::tensor::{DType, Shape};
use burn_fusion::{Fusion, FusionBackend, FusionTensor};
use burn_sad_kernels::sad::{ADAM_STATE, AdamStep, K, PACKED_WORDS, SITE_PARAMS, StatisticsKind};

use super::{PassConfig, RenderGeometry, SadBackend};
use crate::fusion_op::{Mixed, register_op};

type Lazy<B> = FusionTensor<<B as FusionBackend>::FusionRuntime>;

fn ids_shape(geometry: RenderGeometry) -> (Shape, DType) {
    (Shape::new([geometry.cells(), K]), DType::I32)
}

impl<B: FusionBackend + SadBackend> SadBackend for Fusion<B> {
    fn sad_render(sites: Lazy<B>, candidates: Lazy<B>, geometry: RenderGeometry) -> Lazy<B> {
        let image = (
            Shape::new([3, geometry.height, geometry.width]),
            sites.dtype,
        );
        let [image] = register_op::<B, 1, 1, 1, 0>(
            format!("burn_sad::sad_render::{geometry:?}"),
            Mixed {
                floats: [sites],
                ints: [candidates],
            },
            Mixed {
                floats: [image],
                ints: [],
            },
            move |Mixed {
                      floats: [sites],
                      ints: [candidates],
                  }| Mixed {
                floats: [B::sad_render(sites, candidates, geometry)],
                ints: [],
            },
        )
        .floats;
        image
    }

    fn sad_render_backward(
        sites: Lazy<B>,
        candidates: Lazy<B>,
        grad_image: Lazy<B>,
        geometry: RenderGeometry,
    ) -> Lazy<B> {
        let grads = (sites.shape.clone(), sites.dtype);
        let [grads] = register_op::<B, 2, 1, 1, 0>(
            format!("burn_sad::sad_render_backward::{geometry:?}"),
            Mixed {
                floats: [sites, grad_image],
                ints: [candidates],
            },
            Mixed {
                floats: [grads],
                ints: [],
            },
            move |Mixed {
                      floats: [sites, grad_image],
                      ints: [candidates],
                  }| Mixed {
                floats: [B::sad_render_backward(
                    sites, candidates, grad_image, geometry,
                )],
                ints: [],
            },
        )
        .floats;
        grads
    }

    fn sad_squared_error_gradients(
        sites: Lazy<B>,
        candidates: Lazy<B>,
        target: Lazy<B>,
        geometry: RenderGeometry,
        removal: bool,
    ) -> Lazy<B> {
        let columns = if removal {
            SITE_PARAMS + 1
        } else {
            SITE_PARAMS
        };
        let grads = (Shape::new([sites.shape[0], columns]), sites.dtype);
        let [grads] = register_op::<B, 2, 1, 1, 0>(
            format!("burn_sad::sad_squared_error_gradients::{geometry:?}::{removal}"),
            Mixed {
                floats: [sites, target],
                ints: [candidates],
            },
            Mixed {
                floats: [grads],
                ints: [],
            },
            move |Mixed {
                      floats: [sites, target],
                      ints: [candidates],
                  }| Mixed {
                floats: [B::sad_squared_error_gradients(
                    sites, candidates, target, geometry, removal,
                )],
                ints: [],
            },
        )
        .floats;
        grads
    }

    fn sad_init_candidates(sites: Lazy<B>, geometry: RenderGeometry, seed: u32) -> Lazy<B> {
        let [ids] = register_op::<B, 1, 0, 0, 1>(
            format!("burn_sad::sad_init_candidates::{geometry:?}::{seed}"),
            Mixed {
                floats: [sites],
                ints: [],
            },
            Mixed {
                floats: [],
                ints: [ids_shape(geometry)],
            },
            move |Mixed {
                      floats: [sites], ..
                  }| Mixed {
                floats: [],
                ints: [B::sad_init_candidates(sites, geometry, seed)],
            },
        )
        .ints;
        ids
    }

    fn sad_flood_candidates(sites: Lazy<B>, geometry: RenderGeometry) -> Lazy<B> {
        let [ids] = register_op::<B, 1, 0, 0, 1>(
            format!("burn_sad::sad_flood_candidates::{geometry:?}"),
            Mixed {
                floats: [sites],
                ints: [],
            },
            Mixed {
                floats: [],
                ints: [ids_shape(geometry)],
            },
            move |Mixed {
                      floats: [sites], ..
                  }| Mixed {
                floats: [],
                ints: [B::sad_flood_candidates(sites, geometry)],
            },
        )
        .ints;
        ids
    }

    fn sad_pack_sites(sites: Lazy<B>) -> Lazy<B> {
        let packed = (Shape::new([sites.shape[0], PACKED_WORDS]), DType::U32);
        let [packed] = register_op::<B, 1, 0, 0, 1>(
            "burn_sad::sad_pack_sites".to_owned(),
            Mixed {
                floats: [sites],
                ints: [],
            },
            Mixed {
                floats: [],
                ints: [packed],
            },
            move |Mixed {
                      floats: [sites], ..
                  }| Mixed {
                floats: [],
                ints: [B::sad_pack_sites(sites)],
            },
        )
        .ints;
        packed
    }

    fn sad_candidate_pass(
        packed: Lazy<B>,
        candidates: Lazy<B>,
        hilbert_order: Lazy<B>,
        hilbert_rank: Lazy<B>,
        geometry: RenderGeometry,
        pass: PassConfig,
    ) -> Lazy<B> {
        let [ids] = register_op::<B, 0, 4, 0, 1>(
            format!("burn_sad::sad_candidate_pass::{geometry:?}::{pass:?}"),
            Mixed {
                floats: [],
                ints: [packed, candidates, hilbert_order, hilbert_rank],
            },
            Mixed {
                floats: [],
                ints: [ids_shape(geometry)],
            },
            move |Mixed {
                      ints: [packed, candidates, order, rank],
                      ..
                  }| Mixed {
                floats: [],
                ints: [B::sad_candidate_pass(
                    packed, candidates, order, rank, geometry, pass,
                )],
            },
        )
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
        let [stats] = register_op::<B, 2, 1, 1, 0>(
            format!("burn_sad::sad_site_statistics::{geometry:?}::{kind:?}"),
            Mixed {
                floats: [sites, target],
                ints: [candidates],
            },
            Mixed {
                floats: [stats],
                ints: [],
            },
            move |Mixed {
                      floats: [sites, target],
                      ints: [candidates],
                  }| Mixed {
                floats: [B::sad_site_statistics(
                    sites, candidates, target, geometry, kind,
                )],
                ints: [],
            },
        )
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
        let [out] = register_op::<B, 2, 1, 1, 0>(
            format!("burn_sad::sad_tau_diffusion::{geometry:?}::{lambda}::{passes}"),
            Mixed {
                floats: [sites, raw],
                ints: [candidates],
            },
            Mixed {
                floats: [out],
                ints: [],
            },
            move |Mixed {
                      floats: [sites, raw],
                      ints: [candidates],
                  }| Mixed {
                floats: [B::sad_tau_diffusion(
                    sites, candidates, raw, geometry, lambda, passes,
                )],
                ints: [],
            },
        )
        .floats;
        out
    }

    fn sad_prune(sites: Lazy<B>, removal: Lazy<B>, count: usize, norm: f32) -> Lazy<B> {
        let out = (sites.shape.clone(), sites.dtype);
        let [out] = register_op::<B, 2, 0, 1, 0>(
            format!("burn_sad::sad_prune::{count}::{norm}"),
            Mixed {
                floats: [sites, removal],
                ints: [],
            },
            Mixed {
                floats: [out],
                ints: [],
            },
            move |Mixed {
                      floats: [sites, removal],
                      ..
                  }| Mixed {
                floats: [B::sad_prune(sites, removal, count, norm)],
                ints: [],
            },
        )
        .floats;
        out
    }

    fn sad_diffuse_and_step(
        sites: Lazy<B>,
        candidates: Lazy<B>,
        grads: Lazy<B>,
        state: Lazy<B>,
        step: AdamStep,
        geometry: RenderGeometry,
        lambda: f32,
        passes: u32,
    ) -> (Lazy<B>, Lazy<B>) {
        let capacity = sites.shape[0];
        let outputs = [
            (sites.shape.clone(), sites.dtype),
            (Shape::new([capacity, ADAM_STATE]), state.dtype),
        ];
        let [sites, state] = register_op::<B, 3, 1, 2, 0>(
            format!("burn_sad::sad_diffuse_and_step::{step:?}::{geometry:?}::{lambda}::{passes}"),
            Mixed {
                floats: [sites, grads, state],
                ints: [candidates],
            },
            Mixed {
                floats: outputs,
                ints: [],
            },
            move |Mixed {
                      floats: [sites, grads, state],
                      ints: [candidates],
                  }| {
                let (sites, state) = B::sad_diffuse_and_step(
                    sites, candidates, grads, state, step, geometry, lambda, passes,
                );
                Mixed {
                    floats: [sites, state],
                    ints: [],
                }
            },
        )
        .floats;
        (sites, state)
    }

    fn sad_adam_step(
        sites: Lazy<B>,
        grads: Lazy<B>,
        tau_grads: Lazy<B>,
        state: Lazy<B>,
        step: AdamStep,
    ) -> (Lazy<B>, Lazy<B>) {
        let capacity = sites.shape[0];
        let outputs = [
            (sites.shape.clone(), sites.dtype),
            (Shape::new([capacity, ADAM_STATE]), state.dtype),
        ];
        let [sites, state] = register_op::<B, 4, 0, 2, 0>(
            format!("burn_sad::sad_adam_step::{step:?}"),
            Mixed {
                floats: [sites, grads, tau_grads, state],
                ints: [],
            },
            Mixed {
                floats: outputs,
                ints: [],
            },
            move |Mixed {
                      floats: [sites, grads, tau_grads, state],
                      ..
                  }| {
                let (sites, state) = B::sad_adam_step(sites, grads, tau_grads, state, step);
                Mixed {
                    floats: [sites, state],
                    ints: [],
                }
            },
        )
        .floats;
        (sites, state)
    }
}
