//! Launches of the debug views' kernels: colours from the winners, and site marks on a render.

use burn::backend::TensorMetadata;
use burn::backend::cubecl::dtype_to_storage_type;
use burn::tensor::{DType, Shape};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::sad::{
    ColourView, RECORD_WORDS, SITE_PARAMS, TILE, ViewColours, mark_sites_kernel, view_colour_kernel,
};
use cubecl::{CubeCount, CubeDim};

use super::super::SadViewKernels;
use super::records_and_lists;
use super::render::render_records;
use super::{capacity, empty_f32, site_grid};
use crate::runtime::launch::{expect_dims, expect_rows_of, launch_kernel};
use crate::sad::RenderGeometry;

impl SadViewKernels for CubeBackend {
    fn sad_render_records(
        records: CubeTensor,
        candidates: CubeTensor,
        geometry: RenderGeometry,
    ) -> CubeTensor {
        let (records, candidates) =
            records_and_lists("sad_render_records", records, candidates, geometry);
        render_records(records, candidates, geometry)
    }

    fn sad_winners(
        records: CubeTensor,
        candidates: CubeTensor,
        geometry: RenderGeometry,
    ) -> CubeTensor {
        let (records, candidates) = records_and_lists("sad_winners", records, candidates, geometry);
        super::render::winners(records, candidates, geometry)
    }

    /// The colours of `colours` from `winners` (`[height, width]` i32) and `sites` (`[capacity,
    /// 10]`): `[3, height, width]` f32, every pixel written.
    fn sad_view_colours(
        sites: CubeTensor,
        winners: CubeTensor,
        colours: ViewColours,
        (lo, hi): (f32, f32),
    ) -> CubeTensor {
        let op = "sad_view_colours";
        let sites = into_contiguous(sites);
        let winners = into_contiguous(winners);
        expect_rows_of(op, "the sites", &sites, SITE_PARAMS);
        let [height, width] = winners.shape().dims::<2>();
        expect_dims(op, "the winners", &winners, &[height, width]);
        let image = empty_f32(&sites, Shape::new([3, height, width]));
        let count = CubeCount::Static(width.div_ceil(TILE) as u32, height.div_ceil(TILE) as u32, 1);
        launch_kernel!(view_colour_kernel(
            &sites.client,
            count,
            CubeDim::new_2d(TILE as u32, TILE as u32),
            sites.clone().into_tensor_arg(),
            winners.into_tensor_arg(),
            image.clone().into_tensor_arg(),
            ColourView {
                width,
                height,
                lo,
                hi,
            }
            .launch_arg(),
            colours,
            dtype_to_storage_type(DType::F32),
        ));
        image
    }

    /// A copy of `image` (`[3, height, width]` f32) with the live sites of the full `records`
    /// marked: rings, then centres (see `mark_sites_kernel`).
    fn sad_mark_sites(records: CubeTensor, image: CubeTensor) -> CubeTensor {
        let op = "sad_mark_sites";
        let records = into_contiguous(records);
        expect_rows_of(op, "the site records", &records, RECORD_WORDS);
        let image = into_contiguous(image);
        let image = if image.can_mut() { image } else { image.copy() };
        let [_, height, width] = image.shape().dims::<3>();
        expect_dims(op, "the image", &image, &[3, height, width]);
        let sites = capacity(&records);
        for centre in [false, true] {
            let (count, dim) = site_grid(sites);
            launch_kernel!(mark_sites_kernel(
                &records.client,
                count,
                dim,
                records.clone().into_tensor_arg(),
                image.clone().into_tensor_arg(),
                width,
                height,
                sites,
                centre,
                dtype_to_storage_type(DType::F32),
            ));
        }
        image
    }
}
