//! Sites files: the reference trainer's text format (`*_sites.txt`), the packed binary format
//! (`*_sites.sadp`), and the columns both share.

mod columns;
mod packed;
mod text;

pub use packed::{
    PACKED_HEADER_BYTES, PACKED_MAGIC, PACKED_SITE_BYTES, PACKED_VERSION, PackedRanges,
    PackedSites, quantise_sites,
};
pub use text::{
    HEADER, SitesFormat, format_g9, parse_sites, parse_sites_bytes, read_sites,
    read_sites_with_format, sites_to_string, write_sites, write_sites_as,
};
