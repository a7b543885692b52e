//! How the library calls the [`SadKernels`](crate::sad::SadKernels), which nothing differentiates and
//! which therefore have no Autodiff implementation: on the inner backend of autodiff tensors,
//! with the outputs put back on the autodiff device the inputs came from, so that a caller's
//! tensors stay on one device whichever the op.

use burn::tensor::kind::Autodiff;
use burn::tensor::{Device, DispatchTensor, Tensor};

/// One call of a kernel op: whether its inputs were on an autodiff device.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KernelCall {
    autodiff: bool,
}

impl KernelCall {
    /// A call whose inputs are on `device`.
    pub(crate) fn on(device: &Device) -> Self {
        Self {
            autodiff: device.is_autodiff(),
        }
    }

    /// `tensor` as the kernel op takes it: without autodiff.
    pub(crate) fn arg<const D: usize, K: Autodiff>(tensor: Tensor<D, K>) -> DispatchTensor {
        tensor.without_autodiff().into_dispatch()
    }

    /// An output of the op, on the device its inputs came from.
    pub(crate) fn out<const D: usize, K: Autodiff>(self, tensor: DispatchTensor) -> Tensor<D, K> {
        let tensor = Tensor::from_dispatch(tensor);
        if self.autodiff {
            tensor.autodiff()
        } else {
            tensor
        }
    }
}
