//! The debug views of `sad render --view` on a real fit (the reference's 128² astronaut sites
//! file): the winner pass against its host reference, each view's colours against the same
//! formulas on the host (the CLI's view line is tested with the CLI's tests).

use crate::common;

use burn::tensor::Tensor;
use burn_sad::sad::{
    RenderGeometry, RenderOnlyOptions, SiteTable, SiteView, dots_reference, read_sites,
    render_sites, render_view, view_colours_reference, winners, winners_reference,
};
use common::{DATA, assert_close, device, values};

/// The astronaut fit rendered at 97×83 (odd sizes, positions scaled) with its lists.
fn rendered() -> burn_sad::sad::RenderedSites {
    let table = read_sites(format!("{DATA}/sad/astro128_sites.txt")).unwrap();
    let options = RenderOnlyOptions {
        width: Some(97),
        height: Some(83),
        ..RenderOnlyOptions::default()
    };
    render_sites(&table, &options, &device()).unwrap()
}

fn host_sites(rendered: &burn_sad::sad::RenderedSites) -> SiteTable {
    SiteTable::from_tensor(rendered.sites.sites().clone(), 97, 83)
}

#[test]
fn the_winner_pass_matches_its_host_reference() {
    let rendered = rendered();
    let geometry = RenderGeometry::new(97, 83);
    let got: Vec<i32> = winners(&rendered.sites, &rendered.candidates)
        .try_to_vec_as::<i32>()
        .unwrap();
    let ids = rendered.candidates.ids().try_to_vec_as::<i32>().unwrap();
    let want = winners_reference(&host_sites(&rendered).sites, &ids, geometry);
    assert_eq!(got.len(), 97 * 83);
    assert!(want.iter().all(|&w| w >= 0), "a pixel without a live site");
    // Only a tie of two sites' weights to the last bit may go either way.
    let differ = got.iter().zip(&want).filter(|(a, b)| a != b).count();
    assert!(differ <= 3, "{differ} pixels won by another site");
    let distinct: std::collections::HashSet<_> = want.iter().collect();
    assert!(distinct.len() > 500, "{} winning sites", distinct.len());
}

#[test]
fn each_view_has_the_colours_of_its_host_formula() {
    let rendered = rendered();
    let sites = host_sites(&rendered);
    // The host formulas from the device's own winners: this checks the colours, the test
    // above the winners.
    let winners_on_device: Vec<i32> = winners(&rendered.sites, &rendered.candidates)
        .try_to_vec_as::<i32>()
        .unwrap();
    for view in [SiteView::Cells, SiteView::Tau, SiteView::Anisotropy] {
        let shown = render_view(
            view,
            &rendered.sites,
            &rendered.candidates,
            rendered.image.clone(),
        );
        assert_eq!(shown.image.dims(), [3, 83, 97]);
        let got = values(shown.image);
        let want = view_colours_reference(view, &sites.sites, &winners_on_device, (97, 83));
        // The cell colours are integer hashes with exact float steps: the host's, bit for bit.
        // The ramps may differ where a device fuses a multiply and an add.
        let tolerance = if view == SiteView::Cells { 0.0 } else { 2e-3 };
        assert_close(&got, &want, tolerance, 0.0, &format!("{view:?}"));
        // A view worth looking at: not one flat colour.
        let spread = want
            .iter()
            .fold((1f32, 0f32), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
        assert!(spread.1 - spread.0 > 0.3, "{view:?}: {spread:?}");
    }
    // The τ view's legend gives the live sites' log τ range.
    let live = sites.sites.iter().filter(|s| s[0] >= 0.0);
    let lo = live.clone().map(|s| s[2]).fold(f32::INFINITY, f32::min);
    let hi = live.map(|s| s[2]).fold(f32::NEG_INFINITY, f32::max);
    let tau = render_view(
        SiteView::Tau,
        &rendered.sites,
        &rendered.candidates,
        rendered.image.clone(),
    );
    assert!(
        tau.legend.contains(&format!("{lo:.3}")) && tau.legend.contains(&format!("{hi:.3}")),
        "{} lacks {lo:.3} … {hi:.3}",
        tau.legend
    );
    // The image view is the render, clamped.
    let image = render_view(
        SiteView::Image,
        &rendered.sites,
        &rendered.candidates,
        rendered.image.clone(),
    );
    let clamped: Tensor<3> = rendered.image.clone().clamp(0.0, 1.0);
    assert_eq!(values(image.image), values(clamped));
}

#[test]
fn the_dots_view_marks_every_live_site_where_the_host_does() {
    let rendered = rendered();
    let sites = host_sites(&rendered);
    let shown = render_view(
        SiteView::Dots,
        &rendered.sites,
        &rendered.candidates,
        rendered.image.clone(),
    );
    let got = values(shown.image);
    let want = dots_reference(&sites.sites, &values(rendered.image.clone()), (97, 83));
    assert_close(&got, &want, 1e-6, 0.0, "dots");
    // Every live site's own pixel is white (positions are in the 97×83 render's pixels).
    let plane = 97 * 83;
    let live: Vec<_> = sites.sites.iter().filter(|s| s[0] >= 0.0).collect();
    for site in &live {
        let (x, y) = (
            (site[0] + 0.5).floor() as usize,
            (site[1] + 0.5).floor() as usize,
        );
        let pixel = y.min(82) * 97 + x.min(96);
        assert!((0..3).all(|c| got[c * plane + pixel] == 1.0), "{site:?}");
    }
    assert!(
        shown.legend.contains(&format!("{} live sites", live.len())),
        "{}",
        shown.legend
    );
}
