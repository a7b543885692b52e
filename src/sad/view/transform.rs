//! Zoomed and panned views of a fit: where a view puts the file's sites on its own image.
//!
//! SAD is resolution-free: a view at 4× shows the diagram at 4×, not enlarged pixels. Every
//! score is `√D² − r/S` with distances over `S = max(W, H)`, so a view that maps position p to
//! `p · scale + offset` on a `W′ × H′` image keeps every score (and so every weight) of the file
//! when the radius is scaled by `scale` too and `τ` by `S′ / (scale · S)` (a log τ shift):
//! `pack_sites_kernel` applies the transform to the records the kernels read, so the candidate
//! build, the render, the winners and the site marks all see the viewed sites, while the sites
//! themselves (and the debug views' colours) keep the file's values.

use crate::sad::SadError;

/// The largest zoom a view takes: beyond it, positions of a 4K fit leave f16's range in the
/// ranking copy.
pub const MAX_ZOOM: f32 = 1024.0;

/// Where a view puts the file's sites: position p ↦ `p · scale + (offset_x, offset_y)`, radius
/// ↦ `radius · scale`, log τ ↦ `log τ + log_tau_shift`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewTransform {
    /// Output pixels per file pixel.
    pub scale: f32,
    /// Output x of the file's x = 0.
    pub offset_x: f32,
    /// Output y of the file's y = 0.
    pub offset_y: f32,
    /// Added to every log τ: `ln(S′ / (scale · S))` for an output of longer side S′ and a file
    /// of longer side S.
    pub log_tau_shift: f32,
}

impl Default for ViewTransform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl ViewTransform {
    /// The file's own view: every value as it is.
    pub const IDENTITY: Self = Self {
        scale: 1.0,
        offset_x: 0.0,
        offset_y: 0.0,
        log_tau_shift: 0.0,
    };

    /// The view of a `file` (width, height) fit on an `output` (width, height) image at `zoom`
    /// (1: the whole file fits, centred; 2: twice as close), with the file's point `centre`
    /// (file pixels; `None` for the file's centre, (W/2, H/2)) at the output's centre. A file
    /// shown at its own size, zoom 1, centred, is [`ViewTransform::IDENTITY`] exactly.
    ///
    /// The browser viewer (`viewer/viewer.js`, `zoomedView`) computes the same four numbers.
    pub fn zoomed(
        file: (usize, usize),
        output: (usize, usize),
        zoom: f32,
        centre: Option<(f32, f32)>,
    ) -> Result<Self, SadError> {
        if !(zoom.is_finite() && zoom > 0.0 && zoom <= MAX_ZOOM) {
            return Err(SadError::BadZoom {
                zoom,
                max: MAX_ZOOM,
            });
        }
        let (file_w, file_h) = (file.0.max(1) as f32, file.1.max(1) as f32);
        let (out_w, out_h) = (output.0.max(1) as f32, output.1.max(1) as f32);
        let (cx, cy) = centre.unwrap_or((file_w / 2.0, file_h / 2.0));
        if !(cx.is_finite() && cy.is_finite()) {
            return Err(SadError::BadCentre { x: cx, y: cy });
        }
        let scale = (out_w / file_w).min(out_h / file_h) * zoom;
        Ok(Self {
            scale,
            offset_x: out_w / 2.0 - cx * scale,
            offset_y: out_h / 2.0 - cy * scale,
            log_tau_shift: (out_w.max(out_h) / (scale * file_w.max(file_h))).ln(),
        })
    }

    /// Whether this is [`ViewTransform::IDENTITY`].
    pub fn is_identity(&self) -> bool {
        *self == Self::IDENTITY
    }

    /// Where the view puts the file's point (`x`, `y`), as the kernels compute it.
    pub fn apply(&self, x: f32, y: f32) -> (f32, f32) {
        (
            x * self.scale + self.offset_x,
            y * self.scale + self.offset_y,
        )
    }
}
