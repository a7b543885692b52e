//! Per-tile accumulation of per-site sums: neighbouring pixels share most of their candidates,
//! so a tile first sums its contributions in a shared-memory hash table keyed by site id and
//! then flushes each occupied entry with one global atomic add per channel.

use cubecl::prelude::*;

use super::layout::TILE;
use super::table_sums::{
    SMALL_LIMIT, TableSums, fits_fixed, fixed_parts, fixed_value, small_fixed,
};

/// Hash-table entries per tile, one per unit.
const SLOTS: usize = TILE * TILE;
/// An empty entry.
pub(super) const FREE: u32 = u32::MAX;
/// Linear probes before a contribution goes straight to global memory.
const PROBES: usize = 8;

/// A tile's table: site ids and, per entry, `channels` sums in the form `sums` says (see
/// [`TableSums`]): float atomics (`floats`), f32 bits (`bits`), or fixed point (high parts in
/// `highs`, low parts in `bits`). A store the form does not use has one element.
#[derive(CubeType)]
pub struct TileHash<F: Float> {
    keys: Shared<[Atomic<u32>]>,
    bits: Shared<[Atomic<u32>]>,
    highs: Shared<[Atomic<i32>]>,
    floats: Shared<[Atomic<F>]>,
}

#[cube]
impl<F: Float> TileHash<F> {
    /// An empty table. Every unit of the cube must call it (it ends with a barrier).
    pub fn new(#[comptime] channels: usize, #[comptime] sums: TableSums) -> TileHash<F> {
        let unit = UNIT_POS as usize;
        let per_channel = SLOTS * channels;
        let keys = Shared::<[Atomic<u32>]>::new_slice(SLOTS);
        let bits = Shared::<[Atomic<u32>]>::new_slice(comptime![if sums == TableSums::Float {
            1
        } else {
            per_channel
        }]);
        let highs = Shared::<[Atomic<i32>]>::new_slice(comptime![if sums == TableSums::Fixed {
            per_channel
        } else {
            1
        }]);
        let floats = Shared::<[Atomic<F>]>::new_slice(comptime![if sums == TableSums::Float {
            per_channel
        } else {
            1
        }]);
        keys[unit].store(FREE);
        #[unroll]
        for c in 0..channels {
            match comptime![sums] {
                TableSums::Float => floats[c * SLOTS + unit].store(F::new(0.0)),
                TableSums::Bits => bits[c * SLOTS + unit].store(0u32),
                TableSums::Fixed => {
                    bits[c * SLOTS + unit].store(0u32);
                    highs[c * SLOTS + unit].store(0i32);
                }
            }
        }
        sync_cube();
        TileHash::<F> {
            keys,
            bits,
            highs,
            floats,
        }
    }
}

/// Adds one site's `channels` values to the table, or to `out` (`[capacity, channels]`) when the
/// table has no room for it.
///
/// The probes only claim or find the site's entry; the adds come after them, in one place. With
/// the adds inside the probe loop, lanes that found their entries at different probes ran
/// different copies of the adds one after another, and on CUDA each float add to shared memory
/// is a load and compare-and-store loop (`ATOMS.CAST`): the H200 executed each column's loop
/// about seven times per slot and warp. [`TableSums::Fixed`] replaces those loops by one or two
/// native integer adds per column.
#[cube]
pub fn accumulate<F: Float>(
    hash: &TileHash<F>,
    out: &mut Tensor<Atomic<F>>,
    site: usize,
    contribution: &Array<F>,
    #[comptime] channels: usize,
    #[comptime] sums: TableSums,
) {
    let id = site as u32;
    let start = id * 2654435761u32;
    // The entry holding `id`, or `SLOTS` while none does.
    let mut entry = SLOTS.runtime();
    #[unroll]
    for probe in 0..PROBES {
        if entry == SLOTS {
            let slot = ((start + probe as u32) & (SLOTS as u32 - 1)) as usize;
            // A weak exchange may fail spuriously: look at what the slot holds afterwards.
            let mut holder = hash.keys[slot].compare_exchange_weak(FREE, id);
            if holder == FREE {
                holder = hash.keys[slot].load();
                while holder == FREE {
                    hash.keys[slot].compare_exchange_weak(FREE, id);
                    holder = hash.keys[slot].load();
                }
            }
            if holder == id {
                entry = slot;
            }
        }
    }
    if entry < SLOTS {
        if comptime![sums == TableSums::Fixed] {
            add_fixed::<F>(hash, out, site, entry, contribution, channels);
        } else {
            #[unroll]
            for c in 0..channels {
                let index = c * SLOTS + entry;
                match comptime![sums] {
                    TableSums::Float => {
                        hash.floats[index].fetch_add(contribution[c]);
                    }
                    _ => add_bits(&hash.bits, index, f32::cast_from(contribution[c])),
                }
            }
        }
    } else {
        #[unroll]
        for c in 0..channels {
            out[site * channels + c].fetch_add(contribution[c]);
        }
    }
}

/// Adds `contribution` to the fixed-point sums of table entry `entry` (see
/// [`TableSums::Fixed`]). When every value is under [`SMALL_LIMIT`] in magnitude, as most are
/// once a fit is under way, each takes one integer add (its low part); otherwise each value
/// takes its two parts, or a global float atomic where it does not fit. One decision per
/// contribution, not per value: branches around single adds cost more than the adds.
#[cube]
fn add_fixed<F: Float>(
    hash: &TileHash<F>,
    out: &mut Tensor<Atomic<F>>,
    site: usize,
    entry: usize,
    contribution: &Array<F>,
    #[comptime] channels: usize,
) {
    // False for NaN, which then takes the general path and reaches the global sums.
    let mut small = true;
    #[unroll]
    for c in 0..channels {
        small = small && f32::abs(f32::cast_from(contribution[c])) < SMALL_LIMIT;
    }
    if small {
        #[unroll]
        for c in 0..channels {
            let low = small_fixed(f32::cast_from(contribution[c]));
            hash.bits[c * SLOTS + entry].fetch_add(low);
        }
    } else {
        #[unroll]
        for c in 0..channels {
            let index = c * SLOTS + entry;
            let value = f32::cast_from(contribution[c]);
            if fits_fixed(value) {
                let parts = fixed_parts(value);
                hash.highs[index].fetch_add(parts.high);
                hash.bits[index].fetch_add(parts.low);
            } else {
                out[site * channels + c].fetch_add(contribution[c]);
            }
        }
    }
}

/// Adds every occupied entry to `out`. Every unit of the cube must call it (it starts with a
/// barrier).
#[cube]
pub fn flush<F: Float>(
    hash: &TileHash<F>,
    out: &mut Tensor<Atomic<F>>,
    #[comptime] channels: usize,
    #[comptime] sums: TableSums,
) {
    sync_cube();
    let unit = UNIT_POS as usize;
    let key = hash.keys[unit].load();
    if key != FREE {
        #[unroll]
        for c in 0..channels {
            let index = c * SLOTS + unit;
            let value = match comptime![sums] {
                TableSums::Float => hash.floats[index].load(),
                TableSums::Bits => F::cast_from(f32::reinterpret(hash.bits[index].load())),
                TableSums::Fixed => F::cast_from(fixed_value(
                    hash.highs[index].load(),
                    hash.bits[index].load(),
                )),
            };
            out[key as usize * channels + c].fetch_add(value);
        }
    }
}

/// Atomically adds `value` to the f32 whose bits `cells[index]` holds (a compare-exchange loop).
#[cube]
fn add_bits(cells: &Shared<[Atomic<u32>]>, index: usize, value: f32) {
    let mut expected = cells[index].load();
    let mut pending = true;
    while pending {
        let sum = u32::reinterpret(f32::reinterpret(expected) + value);
        let seen = cells[index].compare_exchange_weak(expected, sum);
        if seen == expected {
            pending = false;
        } else {
            expected = seen;
        }
    }
}
