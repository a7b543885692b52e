//! Where a kernel finds an input pixel, by the inputs' layout.

use cubecl::prelude::*;

use super::args::{InputLayout, InputStrides};

/// A pixel's index in img1 and in img2.
#[derive(CubeType)]
pub struct InputIndices {
    /// Index into img1.
    pub img1: usize,
    /// Index into img2.
    pub img2: usize,
}

/// The indices of pixel (`row`, `col`) of plane `plane` in both inputs under `layout`, where
/// `contiguous` is the pixel's index in a contiguous stack of the planes (the outputs' index).
#[cube]
pub fn input_indices(
    contiguous: usize,
    plane: usize,
    row: usize,
    col: usize,
    strides: &InputStrides,
    #[comptime] layout: InputLayout,
) -> InputIndices {
    let mut img1 = contiguous;
    let mut img2 = contiguous;
    if comptime![layout == InputLayout::SharedStrides] {
        img1 = plane * strides.img1_plane + row * strides.img1_row + col;
        img2 = img1;
    }
    if comptime![layout == InputLayout::OwnStrides] {
        img1 = plane * strides.img1_plane + row * strides.img1_row + col;
        img2 = plane * strides.img2_plane + row * strides.img2_row + col;
    }
    InputIndices { img1, img2 }
}
