//! The ranked candidate list a cell builds while it merges lists: the best entries so far by
//! ranking key, distinct, best first, as the reference's `insertClosest4` and
//! `insertClosest8Packed` keep them.

use cubecl::prelude::*;

use super::layout::EMPTY;
use super::record::read_site;
use super::score::score_of;

/// A ranking key: max(τ, 1e-4)·s, smaller is better; `valid = false` for an id out of range or
/// an inactive site.
#[derive(CubeType)]
struct Key<F: Float> {
    value: F,
    valid: bool,
}

/// The ranking key of `id` at point (`qx`, `qy`): max(τ, 1e-4)·s, smaller is better; invalid for
/// an id out of range or an inactive site. Read from records of `stride` words (see
/// [`pack_sites_kernel`](crate::sad::pack_sites_kernel())): the f16-rounded ranking copy for
/// the propagation pass, the exact full record for the jump flood, as the reference ranks each.
#[cube]
fn ranking_key<F: Float, N: Size>(
    records: &Tensor<Vector<u32, N>>,
    id: i32,
    site_count: usize,
    qx: F,
    qy: F,
    inv_scale_sq: F,
    #[comptime] stride: usize,
) -> Key<F> {
    let mut key = Key::<F> {
        value: F::new(0.0),
        valid: false,
    };
    let site = read_site::<N>(records, id, site_count, stride);
    if site.live {
        let tau = F::max(F::cast_from(site.tau), F::new(1e-4));
        let score = score_of::<F>(&site, F::cast_from(site.squeeze), qx, qy, inv_scale_sq);
        let value = tau * score.value;
        // NaN and ±∞ keys are never inserted.
        key.valid = F::abs(value) <= F::new(f32::MAX);
        key.value = value;
    }
    key
}

/// A list of the best candidates found so far at one cell point, best first; an empty entry
/// holds [`EMPTY`] with key +∞, so a valid key always ranks before it.
#[derive(CubeType)]
pub(super) struct Ranked<F: Float> {
    pub(super) ids: Array<i32>,
    keys: Array<F>,
    /// The point the keys are measured at.
    qx: F,
    qy: F,
}

/// An empty list of `len` entries for the point of cell (`cx`, `cy`): its top-left pixel, clamped
/// to the image, as the reference ranks it.
#[cube]
pub(super) fn empty_ranked<F: Float>(
    cx: usize,
    cy: usize,
    downscale: usize,
    width: usize,
    height: usize,
    #[comptime] len: usize,
) -> Ranked<F> {
    let mut ids = Array::<i32>::new(len);
    let mut keys = Array::<F>::new(len);
    // +∞ from its bits: WGSL has no infinite literal.
    let infinity = F::cast_from(f32::reinterpret(0x7f80_0000u32));
    #[unroll]
    for i in 0..len {
        ids[i] = EMPTY;
        keys[i] = infinity;
    }
    Ranked::<F> {
        ids,
        keys,
        qx: F::cast_from(usize::min(cx * downscale, width - 1)),
        qy: F::cast_from(usize::min(cy * downscale, height - 1)),
    }
}

/// Whether `list` (length `len`) already holds `id` (an [`EMPTY`] id counts as held, so it is
/// never ranked).
#[cube]
fn holds<F: Float>(list: &mut Ranked<F>, id: i32, #[comptime] len: usize) -> bool {
    let mut seen = false;
    #[unroll]
    for i in 0..len {
        if list.ids[i] == id {
            seen = true;
        }
    }
    seen
}

/// Inserts `id` with `key` into `list` (length `len`) before the first entry whose key is
/// strictly greater, dropping the last entry; an invalid key, or one no better than the last
/// entry's, changes nothing.
#[cube]
fn insert_keyed<F: Float>(list: &mut Ranked<F>, id: i32, key: Key<F>, #[comptime] len: usize) {
    // Once a list is full most offers rank behind its last entry: one compare turns them away.
    if key.valid && key.value < list.keys[comptime![len - 1]] {
        // From the back, so that every entry is read before it is overwritten: entry i takes
        // entry i − 1 where the key ranks before that, or the key where it ranks between them.
        #[unroll]
        for step in 0..comptime![len - 1] {
            let i = comptime![len - 1 - step];
            if key.value < list.keys[comptime![i - 1]] {
                list.keys[i] = list.keys[comptime![i - 1]];
                list.ids[i] = list.ids[comptime![i - 1]];
            } else if key.value < list.keys[i] {
                list.keys[i] = key.value;
                list.ids[i] = id;
            }
        }
        if key.value < list.keys[0] {
            list.keys[0] = key.value;
            list.ids[0] = id;
        }
    }
}

/// Offers `id` to `list` (length `len`), ranked from `records` (of `stride` words, see
/// [`ranking_key`]).
#[cube]
pub(super) fn offer<F: Float, N: Size>(
    list: &mut Ranked<F>,
    records: &Tensor<Vector<u32, N>>,
    id: i32,
    site_count: usize,
    inv_scale_sq: F,
    #[comptime] len: usize,
    #[comptime] stride: usize,
) {
    if !holds::<F>(list, id, len) {
        let key = ranking_key::<F, N>(
            records,
            id,
            site_count,
            list.qx,
            list.qy,
            inv_scale_sq,
            stride,
        );
        insert_keyed::<F>(list, id, key, len);
    }
}
