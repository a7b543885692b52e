//! Registration of an opaque custom operation with Burn's fusion stream.
//!
//! Fusion records operations lazily; a custom kernel joins that stream as a [`CustomOpIr`] whose
//! execution resolves the inner backend's tensors, runs the inner backend op and publishes its
//! outputs. Every extension trait of this crate implements its `Fusion<B>` methods with
//! [`queue!`] (over [`register_op`]), so the glue exists once and reads the same everywhere.

use burn::tensor::{DType, Shape};
use burn_fusion::custom::{OperationFn, StreamId};
use burn_fusion::{FusionBackend, FusionRuntime, FusionTensor};
use burn_ir::{CustomOpIr, HandleContainer, OperationIr, TensorIr};

/// A tensor of the fusion backend over the inner backend `B`, as its extension methods take and
/// return them.
pub(crate) type FusionTensorOf<B> = FusionTensor<<B as FusionBackend>::FusionRuntime>;

type Handles<B> =
    HandleContainer<<<B as FusionBackend>::FusionRuntime as FusionRuntime>::FusionHandle>;

/// Float and int tensors of one side (inputs or outputs) of a custom op.
pub(crate) struct OpTensors<F, I, const NF: usize, const NI: usize> {
    pub floats: [F; NF],
    pub ints: [I; NI],
}

/// Queues a custom op with `NF` float and `NI` int inputs and `OF` float and `OI` int outputs.
///
/// `outputs` gives each output's shape and dtype (floats first), which must match what `run`
/// returns.
#[allow(clippy::type_complexity)]
pub(crate) fn register_op<B, const NF: usize, const NI: usize, const OF: usize, const OI: usize>(
    id: String,
    inputs: OpTensors<FusionTensor<B::FusionRuntime>, FusionTensor<B::FusionRuntime>, NF, NI>,
    outputs: OpTensors<(Shape, DType), (Shape, DType), OF, OI>,
    run: impl Fn(
        OpTensors<B::FloatTensorPrimitive, B::IntTensorPrimitive, NF, NI>,
    ) -> OpTensors<B::FloatTensorPrimitive, B::IntTensorPrimitive, OF, OI>
    + Send
    + Sync
    + 'static,
) -> OpTensors<FusionTensor<B::FusionRuntime>, FusionTensor<B::FusionRuntime>, OF, OI>
where
    B: FusionBackend,
{
    let client = match (inputs.floats.first(), inputs.ints.first()) {
        (Some(tensor), _) | (None, Some(tensor)) => tensor.client.clone(),
        (None, None) => unreachable!("a custom op has at least one input"),
    };
    let float_irs: [TensorIr; NF] = inputs.floats.map(FusionTensor::into_ir);
    let int_irs: [TensorIr; NI] = inputs.ints.map(FusionTensor::into_ir);
    let uninit = |(shape, dtype)| TensorIr::uninit(client.create_empty_handle(), shape, dtype);
    let float_outs: [TensorIr; OF] = outputs.floats.map(uninit);
    let int_outs: [TensorIr; OI] = outputs.ints.map(uninit);
    let desc = CustomOpIr {
        id,
        inputs: float_irs.iter().chain(&int_irs).cloned().collect(),
        outputs: float_outs.iter().chain(&int_outs).cloned().collect(),
        scalars: Vec::new(),
    };
    let op = OperationFn(move |handles: &mut Handles<B>| {
        let results = run(OpTensors {
            floats: float_irs
                .each_ref()
                .map(|ir| handles.get_float_tensor::<B>(ir)),
            ints: int_irs.each_ref().map(|ir| handles.get_int_tensor::<B>(ir)),
        });
        for (ir, tensor) in float_outs.iter().zip(results.floats) {
            handles.register_float_tensor::<B>(&ir.id, tensor);
        }
        for (ir, tensor) in int_outs.iter().zip(results.ints) {
            handles.register_int_tensor::<B>(&ir.id, tensor);
        }
        Ok(())
    });
    let mut tensors = client
        .register(StreamId::current(), OperationIr::Custom(desc), op)
        .into_iter();
    let floats = std::array::from_fn(|_| tensors.next().expect("one tensor per float output"));
    let ints = std::array::from_fn(|_| tensors.next().expect("one tensor per int output"));
    OpTensors { floats, ints }
}

/// Queues one op of the inner backend `B` on the fusion stream, stated once:
/// `queue!(ID; floats [inputs], ints [inputs] => [float outputs], [int outputs]; CALL)`, where the
/// outputs are `(Shape, DType)` pairs, `ID` (a `format!` string) names the op and every parameter
/// that changes what it computes, and `CALL` (over the input names, now the inner backend's
/// tensors) returns the outputs as a [`OpTensors`].
macro_rules! queue {
    ($id:expr; floats [$($float:ident),*], ints [$($int:ident),*]
        => [$($float_out:expr),*], [$($int_out:expr),*]; $call:expr) => {
        $crate::runtime::fusion_op::register_op::<B, _, _, _, _>(
            $id,
            $crate::runtime::fusion_op::OpTensors { floats: [$($float),*], ints: [$($int),*] },
            $crate::runtime::fusion_op::OpTensors { floats: [$($float_out),*], ints: [$($int_out),*] },
            move |$crate::runtime::fusion_op::OpTensors { floats: [$($float),*], ints: [$($int),*] }| $call,
        )
    };
}
pub(crate) use queue;

/// One float output.
pub(crate) fn float<F, I>(tensor: F) -> OpTensors<F, I, 1, 0> {
    OpTensors {
        floats: [tensor],
        ints: [],
    }
}

/// Two float outputs.
pub(crate) fn floats<F, I>((first, second): (F, F)) -> OpTensors<F, I, 2, 0> {
    OpTensors {
        floats: [first, second],
        ints: [],
    }
}
