//! Registration of an opaque custom operation with Burn's fusion stream.
//!
//! Fusion records operations lazily; a custom kernel joins that stream as a [`CustomOpIr`] whose
//! execution resolves the inner backend's tensors, runs the inner backend op and publishes its
//! outputs. Every extension trait of this crate implements its `Fusion<B>` methods through
//! [`register_float_op`], so the glue exists once.

use burn::tensor::{DType, Shape};
use burn_fusion::custom::{OperationFn, StreamId};
use burn_fusion::{FusionBackend, FusionRuntime, FusionTensor};
use burn_ir::{CustomOpIr, HandleContainer, OperationIr, TensorIr};

type Handles<B> =
    HandleContainer<<<B as FusionBackend>::FusionRuntime as FusionRuntime>::FusionHandle>;

/// Queues `run` on the fusion stream of `inputs[0]` and returns lazy tensors for its outputs.
///
/// `outputs` gives each output's shape and dtype, which must match what `run` returns.
pub(crate) fn register_float_op<B, const I: usize, const O: usize>(
    id: String,
    inputs: [FusionTensor<B::FusionRuntime>; I],
    outputs: [(Shape, DType); O],
    run: impl Fn([B::FloatTensorPrimitive; I]) -> [B::FloatTensorPrimitive; O] + Send + Sync + 'static,
) -> [FusionTensor<B::FusionRuntime>; O]
where
    B: FusionBackend,
{
    let client = inputs[0].client.clone();
    let input_irs: [TensorIr; I] = inputs.map(FusionTensor::into_ir);
    let output_irs: [TensorIr; O] =
        outputs.map(|(shape, dtype)| TensorIr::uninit(client.create_empty_handle(), shape, dtype));
    let desc = CustomOpIr {
        id,
        inputs: input_irs.to_vec(),
        outputs: output_irs.to_vec(),
        scalars: Vec::new(),
    };
    let op = OperationFn(move |handles: &mut Handles<B>| {
        let primitives = input_irs
            .each_ref()
            .map(|ir| handles.get_float_tensor::<B>(ir));
        for (ir, tensor) in output_irs.iter().zip(run(primitives)) {
            handles.register_float_tensor::<B>(&ir.id, tensor);
        }
        Ok(())
    });
    let tensors = client.register(StreamId::current(), OperationIr::Custom(desc), op);
    match tensors.try_into() {
        Ok(outputs) => outputs,
        Err(_) => unreachable!("fusion returns one tensor per declared output"),
    }
}
