//! Autodiff for the SSIM ops: the training forward stores the partial maps (or, with
//! [`SsimMemory::Recompute`], nothing: the backward rebuilds them), and the backward runs the
//! hand-written backward kernel for whichever inputs are tracked.

use burn::backend::{
    AutodiffBackend, Backend, TensorMetadata,
    autodiff::{
        Autodiff,
        checkpoint::{base::Checkpointer, strategy::CheckpointStrategy},
        grads::Gradients,
        ops::{Backward, Ops, OpsKind},
    },
    tensor::{FloatTensor, IntTensor},
};
use burn::tensor::{Shape, Slice};
use burn_sad_kernels::ssim::GradTargets;

use super::{SsimBackend, SsimKernelConfig};
use crate::ssim::SsimMemory;

/// What the backward needs: the inputs, the window mask of a masked op, the partial maps (none
/// when the backward recomputes them) and which gradients to produce.
#[derive(Debug, Clone)]
struct SsimState<B: Backend> {
    img1: FloatTensor<B>,
    img2: FloatTensor<B>,
    mask: Option<FloatTensor<B>>,
    partials: Option<FloatTensor<B>>,
    config: SsimKernelConfig,
    targets: GradTargets,
}

#[derive(Debug)]
struct SsimBackward;

impl<B: SsimBackend> Backward<B, 2> for SsimBackward {
    type State = SsimState<B>;

    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [node1, node2] = ops.parents;
        let upstream = grads.consume::<B>(&ops.node);
        let state = ops.state;
        let shape = state.img1.shape();
        let (config, targets) = (state.config, state.targets);
        let (img1, img2) = (state.img1, state.img2);
        let stack = match state.mask {
            None => {
                let partials = state.partials.unwrap_or_else(|| {
                    B::ssim_value_with_partials(img1.clone(), img2.clone(), config, targets).1
                });
                B::ssim_backward(img1, img2, partials, upstream, config, targets)
            }
            Some(mask) => {
                let partials = state.partials.unwrap_or_else(|| {
                    let (a, b, m) = (img1.clone(), img2.clone(), mask.clone());
                    B::ssim_window_masked_value_with_partials(a, b, m, config, targets).1
                });
                B::ssim_window_masked_backward(
                    img1, img2, mask, partials, upstream, config, targets,
                )
            }
        };
        let mut members = unstack::<B>(stack, shape).into_iter();
        // The stack holds img1's gradient first, and only the gradients that were asked for.
        if state.targets.img1 {
            let grad = members.next().expect("img1 gradient was requested");
            if let Some(node) = node1 {
                grads.register::<B>(node.id, grad);
            }
        }
        if state.targets.img2 {
            let grad = members.next().expect("img2 gradient was requested");
            if let Some(node) = node2 {
                grads.register::<B>(node.id, grad);
            }
        }
    }
}

/// Splits a contiguous `[n, ..shape]` stack into its `n` members.
fn unstack<B: Backend>(stack: FloatTensor<B>, shape: Shape) -> Vec<FloatTensor<B>> {
    let count = stack.shape()[0];
    if count == 1 {
        return vec![B::float_reshape(stack, shape)];
    }
    (0..count)
        .map(|i| {
            let start = i as isize;
            let member = B::float_slice(stack.clone(), &[Slice::new(start, Some(start + 1), 1)]);
            B::float_reshape(member, shape.clone())
        })
        .collect()
}

/// What the backward of an op with an integer img2 needs; only img1 is tracked.
#[derive(Debug, Clone)]
struct Unorm8State<B: Backend> {
    img1: FloatTensor<B>,
    img2: IntTensor<B>,
    partials: Option<FloatTensor<B>>,
    config: SsimKernelConfig,
}

#[derive(Debug)]
struct SsimUnorm8Backward;

impl<B: SsimBackend> Backward<B, 1> for SsimUnorm8Backward {
    type State = Unorm8State<B>;

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [node] = ops.parents;
        let upstream = grads.consume::<B>(&ops.node);
        let state = ops.state;
        let shape = state.img1.shape();
        let config = state.config;
        let partials = state.partials.unwrap_or_else(|| {
            B::ssim_value_with_partials_unorm8(state.img1.clone(), state.img2.clone(), config).1
        });
        let stack = B::ssim_backward_unorm8(state.img1, state.img2, partials, upstream, config);
        if let Some(node) = node {
            grads.register::<B>(node.id, B::float_reshape(stack, shape));
        }
    }
}

/// The value of the SSIM op (under a window `mask` when given, which is never tracked),
/// recording the backward where an input is tracked: the forward stores its partial maps, or
/// with [`SsimMemory::Recompute`] leaves them to the backward.
fn tracked_value<B: SsimBackend, C: CheckpointStrategy>(
    img1: FloatTensor<Autodiff<B, C>>,
    img2: FloatTensor<Autodiff<B, C>>,
    mask: Option<FloatTensor<B>>,
    config: SsimKernelConfig,
) -> FloatTensor<Autodiff<B, C>> {
    let targets = GradTargets {
        img1: img1.is_tracked(),
        img2: img2.is_tracked(),
    };
    let prepared = SsimBackward
        .prepare::<C>([img1.node(), img2.node()])
        .compute_bound()
        .stateful();
    let (img1, img2) = (img1.into_primitive(), img2.into_primitive());
    let value_only = |img1: FloatTensor<B>, img2: FloatTensor<B>| match &mask {
        None => B::ssim_value(img1, img2, config),
        Some(mask) => B::ssim_window_masked_value(img1, img2, mask.clone(), config),
    };
    let with_partials = |img1: FloatTensor<B>, img2: FloatTensor<B>| match &mask {
        None => B::ssim_value_with_partials(img1, img2, config, targets),
        Some(mask) => {
            B::ssim_window_masked_value_with_partials(img1, img2, mask.clone(), config, targets)
        }
    };
    match prepared {
        OpsKind::Tracked(prep) => {
            let (value, partials) = match config.memory {
                SsimMemory::Store | SsimMemory::StoreHalf => {
                    let (value, partials) = with_partials(img1.clone(), img2.clone());
                    (value, Some(partials))
                }
                SsimMemory::Recompute => (value_only(img1.clone(), img2.clone()), None),
            };
            let state = SsimState {
                img1,
                img2,
                mask,
                partials,
                config,
                targets,
            };
            prep.finish(state, value)
        }
        OpsKind::UnTracked(prep) => prep.finish(value_only(img1, img2)),
    }
}

impl<B: SsimBackend, C: CheckpointStrategy> SsimBackend for Autodiff<B, C> {
    fn ssim_value(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        config: SsimKernelConfig,
    ) -> FloatTensor<Self> {
        tracked_value::<B, C>(img1, img2, None, config)
    }

    fn ssim_window_masked_value(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        mask: FloatTensor<Self>,
        config: SsimKernelConfig,
    ) -> FloatTensor<Self> {
        tracked_value::<B, C>(img1, img2, Some(mask.into_primitive()), config)
    }

    fn ssim_window_masked_value_with_partials(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        mask: FloatTensor<Self>,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let (value, partials) = B::ssim_window_masked_value_with_partials(
            img1.into_primitive(),
            img2.into_primitive(),
            mask.into_primitive(),
            config,
            targets,
        );
        (Self::from_inner(value), Self::from_inner(partials))
    }

    fn ssim_window_masked_backward(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        mask: FloatTensor<Self>,
        partials: FloatTensor<Self>,
        upstream: FloatTensor<Self>,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> FloatTensor<Self> {
        Self::from_inner(B::ssim_window_masked_backward(
            img1.into_primitive(),
            img2.into_primitive(),
            mask.into_primitive(),
            partials.into_primitive(),
            upstream.into_primitive(),
            config,
            targets,
        ))
    }

    fn ssim_value_with_partials(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let (mean, partials) = B::ssim_value_with_partials(
            img1.into_primitive(),
            img2.into_primitive(),
            config,
            targets,
        );
        (Self::from_inner(mean), Self::from_inner(partials))
    }

    fn ssim_backward(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        partials: FloatTensor<Self>,
        upstream: FloatTensor<Self>,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> FloatTensor<Self> {
        Self::from_inner(B::ssim_backward(
            img1.into_primitive(),
            img2.into_primitive(),
            partials.into_primitive(),
            upstream.into_primitive(),
            config,
            targets,
        ))
    }

    fn ssim_value_unorm8(
        img1: FloatTensor<Self>,
        img2: IntTensor<Self>,
        config: SsimKernelConfig,
    ) -> FloatTensor<Self> {
        match SsimUnorm8Backward
            .prepare::<C>([img1.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let img1 = img1.into_primitive();
                let (value, partials) = match config.memory {
                    SsimMemory::Store | SsimMemory::StoreHalf => {
                        let (value, partials) =
                            B::ssim_value_with_partials_unorm8(img1.clone(), img2.clone(), config);
                        (value, Some(partials))
                    }
                    SsimMemory::Recompute => (
                        B::ssim_value_unorm8(img1.clone(), img2.clone(), config),
                        None,
                    ),
                };
                let state = Unorm8State {
                    img1,
                    img2,
                    partials,
                    config,
                };
                prep.finish(state, value)
            }
            OpsKind::UnTracked(prep) => {
                prep.finish(B::ssim_value_unorm8(img1.into_primitive(), img2, config))
            }
        }
    }

    fn ssim_value_with_partials_unorm8(
        img1: FloatTensor<Self>,
        img2: IntTensor<Self>,
        config: SsimKernelConfig,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let (value, partials) =
            B::ssim_value_with_partials_unorm8(img1.into_primitive(), img2, config);
        (Self::from_inner(value), Self::from_inner(partials))
    }

    fn ssim_backward_unorm8(
        img1: FloatTensor<Self>,
        img2: IntTensor<Self>,
        partials: FloatTensor<Self>,
        upstream: FloatTensor<Self>,
        config: SsimKernelConfig,
    ) -> FloatTensor<Self> {
        Self::from_inner(B::ssim_backward_unorm8(
            img1.into_primitive(),
            img2,
            partials.into_primitive(),
            upstream.into_primitive(),
            config,
        ))
    }
}
