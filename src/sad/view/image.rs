//! What a debug view is (`sad render --view`): the kinds of view and the image with its legend,
//! shared by the views' entry point (`views`) and the views that colour (`view_colours`) and
//! mark (`view_dots`) a render.

use burn::tensor::Tensor;

/// What `sad render --view` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SiteView {
    /// The render itself.
    Image,
    /// Each pixel in a colour of its winning site (a hash of the id), cell boundaries black.
    Cells,
    /// The winning site's log τ (sharpness) on a colour ramp from the sites' smallest value
    /// (dark blue) through teal to the largest (yellow).
    Tau,
    /// The winning site's anisotropy: brightness grows with |log anisotropy| (grey where
    /// round), the colour gives the long axis (red horizontal, green vertical, blue diagonal).
    Anisotropy,
    /// The render with each live site's position marked: a white pixel ringed in black.
    Dots,
}

/// A debug view: the image (`[3, H, W]`, in [0, 1]) and a line that explains its colours.
#[derive(Debug)]
pub struct ViewImage {
    /// `[3, height, width]`, in [0, 1].
    pub image: Tensor<3>,
    /// What the colours mean, with the view's scale.
    pub legend: String,
}
