//! Render-only mode: rendering saved sites, at their own size or any other.

use std::time::Instant;

use burn::tensor::{Device, Tensor};

use super::{
    Candidates, HilbertOrder, PropagationOptions, RenderGeometry, RenderReadySites, SadError,
    SiteTable, ViewTransform, render_ready,
};

/// Options of [`render_sites`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RenderOnlyOptions {
    /// Output width; `None` keeps the file's (or follows `height`'s scale).
    pub width: Option<usize>,
    /// Output height; `None` keeps the file's (or follows `width`'s scale).
    pub height: Option<usize>,
    /// At another size, scale positions alone, as the reference's PyTorch render does: radii
    /// stay in pixels, so every cell grows or shrinks relative to the image and a render at
    /// half the size is not the native render made smaller. Off by default: positions and radii
    /// scale together, the diagram keeps its shape, and the render is what the viewer draws at
    /// that size (see [`SiteTable::scaled_to`]).
    pub reference_scaling: bool,
    /// Propagation passes after the jump flood (the reference's `--render-cand-passes`, 16).
    pub passes: u32,
    /// Probes of each pass.
    pub propagation: PropagationOptions,
    /// A zoomed view (see [`ViewTransform::zoomed`]): 1 shows the whole file, centred and
    /// scaled uniformly to fit the output, 4 four times closer; radii and τ follow the zoom
    /// (the diagram, not its pixels, is magnified). `None` (with no `centre`) renders the file
    /// stretched to the output size as the reference does.
    pub zoom: Option<f32>,
    /// The file's point (in its pixels) at the centre of a zoomed view; the file's centre if
    /// `None`. Either this or `zoom` asks for a zoomed view.
    pub centre: Option<(f32, f32)>,
}

impl Default for RenderOnlyOptions {
    fn default() -> Self {
        Self {
            width: None,
            height: None,
            reference_scaling: false,
            passes: 16,
            propagation: PropagationOptions::default(),
            zoom: None,
            centre: None,
        }
    }
}

/// Renders [`render_sites`] times, to report their mean.
const RENDER_REPEATS: u32 = 10;

/// A render of saved sites, with the times of its two phases: wall time from a synchronised
/// device to the phase's work done (with a progress callback, the device is also waited for
/// after every pass).
#[derive(Debug)]
pub struct RenderedSites {
    /// `[3, height, width]`, not clamped.
    pub image: Tensor<3>,
    /// Milliseconds to build the candidate lists (record packing, flood, passes), as the
    /// reference's `Candidate build:`.
    pub candidate_ms: f64,
    /// Milliseconds of the render itself, as the reference's `Render:`: 10 renders, divided by
    /// 10.
    pub render_ms: f64,
    /// Milliseconds of an untimed first build and render, which compiles (or loads from the
    /// kernel cache) every kernel, so that the two times above are of warm kernels, as the
    /// reference's are.
    pub warm_up_ms: f64,
    /// The sites as rendered (scaled to the output size), packed for the kernels.
    pub sites: RenderReadySites,
    /// The candidate lists the render read (for the debug views, see
    /// [`render_view`](super::render_view)).
    pub candidates: Candidates,
}

/// The most propagation passes render-only mode runs; lists stop changing long before (the
/// reference runs 16).
pub const MAX_PASSES: u32 = 1024;

impl RenderOnlyOptions {
    /// The output size for `table`: the requested one, with a missing side scaled like the
    /// given one, or the file's size.
    pub fn size_for(&self, table: &SiteTable) -> Result<(usize, usize), SadError> {
        let (w, h) = (table.width, table.height);
        let size = match (self.width, self.height) {
            (Some(width), Some(height)) => (width, height),
            (Some(width), None) if w > 0 => (width, h.saturating_mul(width).div_ceil(w).max(1)),
            (None, Some(height)) if h > 0 => (w.saturating_mul(height).div_ceil(h).max(1), height),
            (None, None) if w > 0 => (w, h),
            _ => return Err(SadError::NoSize),
        };
        if size.0 == 0 || size.1 == 0 {
            return Err(SadError::BadSize {
                width: size.0,
                height: size.1,
            });
        }
        if size.0 > crate::image::MAX_SIDE || size.1 > crate::image::MAX_SIDE {
            return Err(SadError::TooLarge {
                width: size.0,
                height: size.1,
                max: crate::image::MAX_SIDE,
            });
        }
        Ok(size)
    }

    /// The view of `table` at `size`: the zoomed view if `zoom` or `centre` asks for one.
    pub fn view_for(
        &self,
        table: &SiteTable,
        size: (usize, usize),
    ) -> Result<Option<ViewTransform>, SadError> {
        if self.zoom.is_none() && self.centre.is_none() {
            return Ok(None);
        }
        let zoom = self.zoom.unwrap_or(1.0);
        ViewTransform::zoomed((table.width, table.height), size, zoom, self.centre).map(Some)
    }
}

/// Renders `table` on `device`: at its own size, or at another with positions scaled by
/// (W′/W, H′/H) (see [`SiteTable::scaled_to`]). The candidate lists are built as the reference
/// builds them in render-only mode: a jump flood, then `options.passes` propagation passes.
pub fn render_sites(
    table: &SiteTable,
    options: &RenderOnlyOptions,
    device: &Device,
) -> Result<RenderedSites, SadError> {
    render_sites_with_progress(table, options, device, None)
}

/// [`render_sites`] that reports progress: `progress(done, total)` after the flood, after each
/// propagation pass and after the render (`total = passes + 2`). With a callback, the device is
/// synchronised after every step so the report is true, which adds a little to the times.
pub fn render_sites_with_progress(
    table: &SiteTable,
    options: &RenderOnlyOptions,
    device: &Device,
    mut progress: Option<&mut dyn FnMut(u32, u32)>,
) -> Result<RenderedSites, SadError> {
    let prepared = Prepared::new(table, options, device)?;
    let sync = || {
        device
            .sync()
            .map_err(|e| SadError::Device(format!("{e:?}")))
    };
    let total = options.passes + 2;
    let mut report = |done: u32| -> Result<(), SadError> {
        if let Some(progress) = progress.as_mut() {
            sync()?;
            progress(done, total);
        }
        Ok(())
    };
    sync()?;
    // A first, untimed build and render launches every kernel once: the reference's times are
    // of loaded modules, and ours should not include just-in-time compilation either.
    let start = Instant::now();
    let (warm_ready, warm) = prepared.build(options.passes.min(1), options, &mut |_| Ok(()))?;
    drop(render_ready(&warm_ready, &warm));
    sync()?;
    let warm_up_ms = start.elapsed().as_secs_f64() * 1e3;
    // Wall time between synchronisations: what a caller waits for. It holds the host's launching
    // and one wait at the end, as the reference's CUDA events hold whatever its stream waited
    // for. The build packs the records the renders read (the reference packs its site copy
    // there).
    let start = Instant::now();
    let (ready, candidates) = prepared.build(options.passes, options, &mut report)?;
    sync()?;
    let candidate_ms = start.elapsed().as_secs_f64() * 1e3;
    let start = Instant::now();
    for _ in 1..RENDER_REPEATS {
        drop(render_ready(&ready, &candidates));
    }
    let image = render_ready(&ready, &candidates);
    sync()?;
    let render_ms = start.elapsed().as_secs_f64() * 1e3 / RENDER_REPEATS as f64;
    report(total)?;
    Ok(RenderedSites {
        image,
        candidate_ms,
        render_ms,
        warm_up_ms,
        sites: ready,
        candidates,
    })
}

/// The render of [`render_sites`] alone: one candidate build and one render, with no warm-up
/// and no timing (what a saved file looks like, see
/// [`saved_psnr`](super::fit::saved_psnr)).
pub fn render_sites_image(
    table: &SiteTable,
    options: &RenderOnlyOptions,
    device: &Device,
) -> Result<Tensor<3>, SadError> {
    let prepared = Prepared::new(table, options, device)?;
    let (ready, candidates) = prepared.build(options.passes, options, &mut |_| Ok(()))?;
    Ok(render_ready(&ready, &candidates))
}

/// What every candidate build of a render-only call starts from: the checked output size, the
/// view, the sites on the device and their Hilbert order.
struct Prepared {
    sites: Tensor<2>,
    view: ViewTransform,
    geometry: RenderGeometry,
    hilbert: HilbertOrder,
}

impl Prepared {
    fn new(
        table: &SiteTable,
        options: &RenderOnlyOptions,
        device: &Device,
    ) -> Result<Self, SadError> {
        let (width, height) = options.size_for(table)?;
        if options.passes > MAX_PASSES {
            return Err(SadError::TooManyPasses {
                passes: options.passes,
                max: MAX_PASSES,
            });
        }
        let view = options.view_for(table, (width, height))?;
        let table = match view {
            // A view keeps the file's sites; their records are of the view.
            Some(_) => table.clone(),
            None => table.scaled_to(width, height, !options.reference_scaling),
        };
        let view = view.unwrap_or(ViewTransform::IDENTITY);
        let capacity = table.sites.len();
        if capacity == 0 || capacity > i32::MAX as usize {
            return Err(SadError::BadCapacity(capacity));
        }
        crate::device::family_support(device, crate::device::KernelFamily::SadRender)
            .map_err(|problem| SadError::UnsupportedDevice(problem.to_string()))?;
        Ok(Self {
            sites: table.to_tensor(capacity, device),
            view,
            geometry: RenderGeometry::new(width, height),
            // Built outside the timed region, as in the reference.
            hilbert: HilbertOrder::of_view(&table, view, width, height, device),
        })
    }

    /// Packs the viewed records and builds their lists: a jump flood, then `passes` passes.
    fn build(
        &self,
        passes: u32,
        options: &RenderOnlyOptions,
        report: &mut dyn FnMut(u32) -> Result<(), SadError>,
    ) -> Result<(RenderReadySites, Candidates), SadError> {
        let ready = RenderReadySites::viewed(self.sites.clone(), self.view)?;
        let candidates = Candidates::flood_and_propagate(
            &ready,
            self.geometry,
            &self.hilbert,
            passes,
            options.propagation,
            report,
        )?;
        Ok((ready, candidates))
    }
}

/// PSNR in dB of `image` against `target` (both in [0, 1], same shape), over every pixel and
/// channel: 20·log10(1 / √MSE), or 100 for identical images (as the reference prints it).
pub fn psnr<const D: usize>(image: Tensor<D>, target: Tensor<D>) -> f64 {
    let mse = (image - target)
        .powf_scalar(2.0)
        .mean()
        .into_scalar::<f32>() as f64;
    if mse <= 0.0 {
        100.0
    } else {
        20.0 * (1.0 / mse.sqrt()).log10()
    }
}
