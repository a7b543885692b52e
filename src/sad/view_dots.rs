//! The `dots` debug view: the render with each live site's position marked on top, a white
//! pixel ringed by 8 black ones, drawn by tensor ops on the render's device (no host loop over
//! pixels), and the same marks on the host ([`dots_reference`]) for the tests.

use burn::tensor::{Bool, IndexingUpdateOp, Tensor};
use burn_sad_kernels::sad::{POSITION, SITE_PARAMS};

use super::views::ViewImage;

/// The 8 ring offsets around a site's pixel.
const RING: [(i64, i64); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

/// The pixel a site at (`x`, `y`) marks, offset by (`dx`, `dy`) and clamped to the image: the
/// nearest integer point (pixels are evaluated at integer coordinates).
fn marked_pixel(x: f32, y: f32, (dx, dy): (i64, i64), (width, height): (usize, usize)) -> usize {
    let px = ((x + 0.5).floor() as i64 + dx).clamp(0, width as i64 - 1) as usize;
    let py = ((y + 0.5).floor() as i64 + dy).clamp(0, height as i64 - 1) as usize;
    py * width + px
}

/// `image` (`[3, H, W]`) clamped to [0, 1] with the live sites of `sites` (`[capacity, 10]`, in
/// the image's pixel coordinates) marked: centres white, rings black (a centre wins over another
/// site's ring).
pub(super) fn dots(sites: &Tensor<2>, image: Tensor<3>) -> ViewImage {
    let [_, height, width] = image.dims();
    let capacity = sites.dims()[0];
    let plane = height * width;
    let device = image.device();
    let column = |c: usize| sites.clone().narrow(1, c, 1).reshape([capacity]);
    let (x, y) = (column(POSITION), column(POSITION + 1));
    let live = x.clone().greater_equal_elem(0.0);
    let round = |v: Tensor<1>| v.add_scalar(0.5).floor().int();
    let (px, py) = (round(x), round(y));
    let dead = live.clone().bool_not();
    let ones = Tensor::<1>::ones([capacity], &device);
    // How many marks of one kind cover each pixel; dead sites count at a spare last index.
    let cover = |offsets: &[(i64, i64)]| -> Tensor<3, Bool> {
        let mut counts = Tensor::<1>::zeros([plane + 1], &device);
        for &(dx, dy) in offsets {
            let cx = px.clone().add_scalar(dx).clamp(0, width as i64 - 1);
            let cy = py.clone().add_scalar(dy).clamp(0, height as i64 - 1);
            let index = (cy.mul_scalar(width as i64) + cx).mask_fill(dead.clone(), plane as i64);
            counts = counts.select_assign(0, index, ones.clone(), IndexingUpdateOp::Add);
        }
        counts
            .narrow(0, 0, plane)
            .greater_elem(0.0)
            .reshape([1, height, width])
            .repeat_dim(0, 3)
    };
    let (ring, centre) = (cover(&RING), cover(&[(0, 0)]));
    let marked = image
        .clamp(0.0, 1.0)
        .mask_fill(ring, 0.0)
        .mask_fill(centre, 1.0);
    let count = live.int().sum().into_scalar::<i64>();
    ViewImage {
        image: marked,
        legend: format!(
            "dots: the render, each of the {count} live sites a white pixel ringed in black"
        ),
    }
}

/// The `dots` view ([`SiteView::Dots`](super::SiteView::Dots)) on the host: `image`
/// (`[3, H, W]` values) clamped, with the marks of the live sites of `sites`.
pub fn dots_reference(
    sites: &[[f32; SITE_PARAMS]],
    image: &[f32],
    (width, height): (usize, usize),
) -> Vec<f32> {
    let plane = width * height;
    let mut out: Vec<f32> = image.iter().map(|v| v.clamp(0.0, 1.0)).collect();
    let live = || sites.iter().filter(|s| s[POSITION] >= 0.0);
    let mut paint = |offset: (i64, i64), value: f32| {
        for site in live() {
            let pixel = marked_pixel(site[POSITION], site[POSITION + 1], offset, (width, height));
            for c in 0..3 {
                out[c * plane + pixel] = value;
            }
        }
    };
    for offset in RING {
        paint(offset, 0.0);
    }
    paint((0, 0), 1.0);
    out
}
