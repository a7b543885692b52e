//! Reading an input pixel in the kernels' arithmetic type, whatever the input's storage type.

use cubecl::prelude::*;

/// How an input's stored elements map to values in [0, 1].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InputEncoding {
    /// Floats (f32, f16 or bf16) that are the values themselves.
    #[default]
    Float,
    /// 8-bit integers `q` that stand for `q / 255`.
    Unorm8,
}

/// Input `tensor[index]` as `F`: converted from its storage type, and divided by 255 for
/// [`InputEncoding::Unorm8`] (a division, so that the value equals the f32 one a host computes
/// as `q / 255`).
#[cube]
pub fn load_input<F: Float, I: Numeric>(
    tensor: &Tensor<I>,
    index: usize,
    #[comptime] encoding: InputEncoding,
) -> F {
    decode_input::<F, I>(tensor[index], encoding)
}

/// A stored input element as `F` (see [`load_input`]). A kernel that reads ahead keeps the
/// stored element and decodes it where it uses the value: a conversion right after the load
/// would wait for the load there.
#[cube]
pub fn decode_input<F: Float, I: Numeric>(stored: I, #[comptime] encoding: InputEncoding) -> F {
    let value = F::cast_from(stored);
    if comptime![encoding == InputEncoding::Unorm8] {
        value / F::new(255.0)
    } else {
        value
    }
}
