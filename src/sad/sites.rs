//! Sites on the host ([`SiteTable`]) and as a trainable Burn module ([`Sites`]).

use burn::module::{Module, Param};
use burn::tensor::{Bool, Device, Tensor, TensorData};
use burn_sad_kernels::sad::{POSITION, RADIUS, SITE_PARAMS};

/// Sites on the host, in the kernels' parameter order (position x, y, log τ, radius, colour
/// r, g, b, direction x, y, log anisotropy), with the image size they were fitted at.
#[derive(Clone, Debug, PartialEq)]
pub struct SiteTable {
    /// Image width the positions refer to (0 when unknown).
    pub width: usize,
    /// Image height the positions refer to (0 when unknown).
    pub height: usize,
    /// One row per site; position x < 0 marks an inactive slot.
    pub sites: Vec<[f32; SITE_PARAMS]>,
}

/// An inactive slot: position (−1, −1), direction (1, 0), everything else 0.
pub const INACTIVE_SITE: [f32; SITE_PARAMS] = [-1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];

impl SiteTable {
    /// Active sites.
    pub fn active(&self) -> usize {
        self.sites.iter().filter(|s| s[POSITION] >= 0.0).count()
    }

    /// The sites as a `[capacity, 10]` tensor; slots past the table's sites are inactive.
    ///
    /// # Panics
    /// If `capacity` is smaller than the number of sites.
    pub fn to_tensor(&self, capacity: usize, device: &Device) -> Tensor<2> {
        assert!(
            capacity >= self.sites.len(),
            "capacity {capacity} is smaller than the {} sites",
            self.sites.len()
        );
        let mut values = Vec::with_capacity(capacity * SITE_PARAMS);
        for site in &self.sites {
            values.extend_from_slice(site);
        }
        for _ in self.sites.len()..capacity {
            values.extend_from_slice(&INACTIVE_SITE);
        }
        upload_contiguous(values, [capacity, SITE_PARAMS], device)
    }

    /// Reads a `[capacity, 10]` sites tensor back to the host.
    pub fn from_tensor(sites: Tensor<2>, width: usize, height: usize) -> Self {
        let values = sites
            .try_to_vec_as::<f32>()
            .expect("sites tensor is readable");
        Self {
            width,
            height,
            sites: values
                .chunks_exact(SITE_PARAMS)
                .map(|row| row.try_into().expect("rows of 10"))
                .collect(),
        }
    }

    /// The table for rendering at `width × height`: positions scaled by (W′ / W, H′ / H) and,
    /// with `scale_radius`, radii by max(W′, H′) / max(W, H), which keeps the diagram the same
    /// shape (what [`render_sites`](super::render_sites) does by default).
    ///
    /// Distances are measured in units of max(W, H) but radii in pixels, so without
    /// `scale_radius` (positions alone, as the reference's PyTorch backend's
    /// `scale_sites_to_target`) a render at another size also shrinks or grows every cell's
    /// radius relative to the image.
    pub fn scaled_to(&self, width: usize, height: usize, scale_radius: bool) -> Self {
        if (width, height) == (self.width, self.height) || self.width == 0 || self.height == 0 {
            return Self {
                width,
                height,
                sites: self.sites.clone(),
            };
        }
        let sx = width as f32 / self.width as f32;
        let sy = height as f32 / self.height as f32;
        let sr = width.max(height) as f32 / self.width.max(self.height) as f32;
        let sites = self
            .sites
            .iter()
            .map(|site| {
                let mut site = *site;
                if site[POSITION] >= 0.0 {
                    site[POSITION] *= sx;
                    site[POSITION + 1] *= sy;
                    if scale_radius {
                        site[RADIUS] *= sr;
                    }
                }
                site
            })
            .collect();
        Self {
            width,
            height,
            sites,
        }
    }
}

/// Sites as trainable parameters of fixed capacity.
///
/// The live mask ([`Sites::live_mask`]) is position x ≥ 0, as in the reference and its files:
/// pruning marks a slot inactive (position x < 0) and densifying reuses inactive slots, so the
/// parameters, and any optimizer state keyed by them, are never reallocated. Each parameter
/// group is its own tensor, so optimizers can give them their own learning rates;
/// [`Sites::packed`] joins them into the `[capacity, 10]` layout the render op takes
/// (differentiably).
#[derive(Module, Debug)]
pub struct Sites {
    /// `[capacity, 2]`, pixels.
    pub position: Param<Tensor<2>>,
    /// `[capacity, 1]`, log τ (sharpness).
    pub log_tau: Param<Tensor<2>>,
    /// `[capacity, 1]`, pixels.
    pub radius: Param<Tensor<2>>,
    /// `[capacity, 3]`, RGB in [0, 1].
    pub color: Param<Tensor<2>>,
    /// `[capacity, 2]`, unit vector of the anisotropy axis.
    pub direction: Param<Tensor<2>>,
    /// `[capacity, 1]`, log of the stretch along the axis.
    pub log_aniso: Param<Tensor<2>>,
}

impl Sites {
    /// Parameters from a `[capacity, 10]` sites tensor.
    pub fn from_packed(sites: Tensor<2>) -> Self {
        let column =
            |from: usize, to: usize| Param::from_tensor(sites.clone().narrow(1, from, to - from));
        Self {
            position: column(0, 2),
            log_tau: column(2, 3),
            radius: column(3, 4),
            color: column(4, 7),
            direction: column(7, 9),
            log_aniso: column(9, 10),
        }
    }

    /// Parameters holding `table`, with room for `capacity` sites.
    pub fn from_table(table: &SiteTable, capacity: usize, device: &Device) -> Self {
        Self::from_packed(table.to_tensor(capacity, device))
    }

    /// The `[capacity, 10]` tensor the render op takes.
    pub fn packed(&self) -> Tensor<2> {
        Tensor::cat(
            vec![
                self.position.val(),
                self.log_tau.val(),
                self.radius.val(),
                self.color.val(),
                self.direction.val(),
                self.log_aniso.val(),
            ],
            1,
        )
    }

    /// The live mask, `[capacity]`: which slots hold an active site (position x ≥ 0).
    pub fn live_mask(&self) -> Tensor<1, Bool> {
        let capacity = self.capacity();
        self.position
            .val()
            .narrow(1, 0, 1)
            .greater_equal_elem(0.0)
            .reshape([capacity])
    }

    /// Slots, active or not.
    pub fn capacity(&self) -> usize {
        self.position.val().dims()[0]
    }

    /// The sites on the host, for an image of `width × height`.
    pub fn to_table(&self, width: usize, height: usize) -> SiteTable {
        SiteTable::from_tensor(self.packed(), width, height)
    }
}

/// Live sites of a packed `[slots, SITE_PARAMS]` site tensor (position x ≥ 0), counted on its
/// device: one scalar is read back, not the table.
pub(crate) fn live_site_count(packed: Tensor<2>) -> usize {
    packed
        .narrow(1, POSITION, 1)
        .greater_equal_elem(0.0)
        .int()
        .sum()
        .into_scalar::<i64>() as usize
}

/// `values` as a contiguous tensor of `shape`. Uploaded as one row and reshaped: CubeCL's CUDA
/// runtime pads the rows of a multi-dimensional upload to an aligned pitch (a `[n, 10]` sites
/// table, a `[3, H, W]` image of odd width), and every kernel that reads a padded tensor would
/// first copy it into a contiguous one, on every call.
pub(crate) fn upload_contiguous<const D: usize>(
    values: Vec<f32>,
    shape: [usize; D],
    device: &Device,
) -> Tensor<D> {
    let len = values.len();
    Tensor::<1>::from_data(TensorData::new(values, [len]), device).reshape(shape)
}
