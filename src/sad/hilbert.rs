//! The sites in Hilbert-curve order over the image: the candidate passes probe a cell's best
//! site's neighbours along the curve (the reference's `CAND_HILBERT_PROBES`).

use burn::tensor::{Int, Tensor, TensorData};

use super::{SiteTable, ViewTransform};

/// The sites sorted along a Hilbert curve over the image: `order[r]` is the site at rank r,
/// `rank[i]` the rank of site i.
#[derive(Clone, Debug)]
pub struct HilbertOrder {
    /// Site ids by curve position.
    pub order: Tensor<1, Int>,
    /// Curve position by site id.
    pub rank: Tensor<1, Int>,
}

/// Index of (x, y) along the Hilbert curve of a 2^bits square.
fn hilbert_index(mut x: u32, mut y: u32, bits: u32) -> u64 {
    let mask = (1u32 << bits) - 1;
    let mut index = 0u64;
    for i in (0..bits).rev() {
        let rx = (x >> i) & 1;
        let ry = (y >> i) & 1;
        index |= u64::from((3 * rx) ^ ry) << (2 * i);
        if ry == 0 {
            if rx == 1 {
                x = mask - x;
                y = mask - y;
            }
            std::mem::swap(&mut x, &mut y);
        }
    }
    index
}

impl HilbertOrder {
    /// Sorts the sites of `table` (inactive ones at the clamped corner (0, 0), as the
    /// reference) by the curve index of their pixel; ties keep site order.
    pub fn of(
        table: &SiteTable,
        width: usize,
        height: usize,
        device: &burn::tensor::Device,
    ) -> Self {
        Self::of_view(table, ViewTransform::IDENTITY, width, height, device)
    }

    /// [`HilbertOrder::of`] the sites as `view` places them on a `width × height` image (live
    /// sites outside it at the nearest edge; inactive ones at (0, 0)).
    pub fn of_view(
        table: &SiteTable,
        view: ViewTransform,
        width: usize,
        height: usize,
        device: &burn::tensor::Device,
    ) -> Self {
        let side = width.max(height).max(2);
        let bits = (usize::BITS - (side - 1).leading_zeros()).max(1);
        let clamp = |v: f32, n: usize| (v as i64).clamp(0, n as i64 - 1) as u32;
        let mut keyed: Vec<(u64, usize)> = table
            .sites
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let (x, y) = if s[0] >= 0.0 {
                    view.apply(s[0], s[1])
                } else {
                    (s[0], s[1])
                };
                (hilbert_index(clamp(x, width), clamp(y, height), bits), i)
            })
            .collect();
        keyed.sort_by_key(|&(key, i)| (key, i));
        let order: Vec<i32> = keyed.iter().map(|&(_, i)| i as i32).collect();
        let mut rank = vec![0i32; order.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i as usize] = r as i32;
        }
        let n = order.len();
        Self {
            order: Tensor::from_data(TensorData::new(order, [n]), device),
            rank: Tensor::from_data(TensorData::new(rank, [n]), device),
        }
    }
}
