//! The results table of a data-set fit: one row per image, kept as CSV (for spreadsheets and
//! `pandas.read_csv`) and as JSON lines (for `jq` and plotting scripts), rewritten atomically
//! after every image so that an interrupted run loses no finished row.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::DatasetError;
use crate::image::write_all_atomically;

/// One image's outcome. A failed image has a non-empty `error` and zeros where nothing was
/// measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    /// The image's file name, which names its outputs (`<stem>.png`, `<stem>_sites.txt`).
    pub name: String,
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Live sites written.
    pub sites: usize,
    /// Bits per pixel at 128 bits per site.
    pub bpp: f64,
    /// PSNR of the fit's render against the image, dB.
    pub psnr: f64,
    /// SSIM of the fit's render against the image.
    pub ssim: f64,
    /// The training loop's time, seconds.
    pub training_s: f64,
    /// Iterations run.
    pub iterations: usize,
    /// The fit's seed.
    pub seed: u64,
    /// The device it ran on.
    pub device: String,
    /// Why the image could not be fitted; empty for a finished fit.
    pub error: String,
}

/// The CSV header, in [`ResultRow`]'s field order.
pub const CSV_HEADER: &str =
    "name,width,height,sites,bpp,psnr,ssim,training_s,iterations,seed,device,error";

impl ResultRow {
    /// A row for an image that could not be fitted.
    pub fn failed(name: &str, device: &str, seed: u64, error: impl std::fmt::Display) -> Self {
        Self {
            name: name.to_owned(),
            width: 0,
            height: 0,
            sites: 0,
            bpp: 0.0,
            psnr: 0.0,
            ssim: 0.0,
            training_s: 0.0,
            iterations: 0,
            seed,
            device: device.to_owned(),
            // One line, whatever the error said.
            error: error.to_string().replace(['\n', '\r'], " "),
        }
    }

    /// Whether the fit finished.
    pub fn succeeded(&self) -> bool {
        self.error.is_empty()
    }

    fn to_csv(&self) -> String {
        [
            quoted(&self.name),
            self.width.to_string(),
            self.height.to_string(),
            self.sites.to_string(),
            format!("{:.4}", self.bpp),
            format!("{:.4}", self.psnr),
            format!("{:.6}", self.ssim),
            format!("{:.3}", self.training_s),
            self.iterations.to_string(),
            self.seed.to_string(),
            quoted(&self.device),
            quoted(&self.error),
        ]
        .join(",")
    }

    fn from_csv(fields: &[String]) -> Result<Self, String> {
        let [
            name,
            width,
            height,
            sites,
            bpp,
            psnr,
            ssim,
            training_s,
            iterations,
            seed,
            device,
            error,
        ] = fields
        else {
            return Err(format!("{} fields, expected 12", fields.len()));
        };
        fn number<T: std::str::FromStr>(what: &str, text: &str) -> Result<T, String> {
            text.parse()
                .map_err(|_| format!("{what} `{text}` is not a number"))
        }
        Ok(Self {
            name: name.clone(),
            width: number("width", width)?,
            height: number("height", height)?,
            sites: number("sites", sites)?,
            bpp: number("bpp", bpp)?,
            psnr: number("psnr", psnr)?,
            ssim: number("ssim", ssim)?,
            training_s: number("training_s", training_s)?,
            iterations: number("iterations", iterations)?,
            seed: number("seed", seed)?,
            device: device.clone(),
            error: error.clone(),
        })
    }
}

/// `field` as a CSV field: quoted where it holds a comma, a quote or a line break.
fn quoted(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}

/// The fields of one CSV line (RFC 4180 quoting, no line breaks inside fields).
fn csv_fields(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            ('"', true) => quoted = false,
            ('"', false) if field.is_empty() => quoted = true,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    if quoted {
        return Err("a quoted field is not closed".into());
    }
    fields.push(field);
    Ok(fields)
}

/// The rows of a data set, one per image name, in name order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResultsTable {
    rows: BTreeMap<String, ResultRow>,
}

impl ResultsTable {
    /// The table saved at `csv`.
    pub fn load(csv: &Path) -> Result<Self, DatasetError> {
        let error = |why: String| DatasetError::Results {
            path: csv.display().to_string(),
            why,
        };
        let text = std::fs::read_to_string(csv).map_err(|e| error(e.to_string()))?;
        Self::parse(&text).map_err(error)
    }

    /// The table saved at `csv`, or an empty one where there is no such file.
    pub fn load_or_empty(csv: &Path) -> Result<Self, DatasetError> {
        if csv.exists() {
            Self::load(csv)
        } else {
            Ok(Self::default())
        }
    }

    /// Rows in the table.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table has no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Parses a table written by [`ResultsTable::to_csv`].
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, header)) if header.trim_start_matches('\u{feff}') == CSV_HEADER => {}
            _ => return Err(format!("the first line is not `{CSV_HEADER}`")),
        }
        let mut table = Self::default();
        for (index, line) in lines.filter(|(_, line)| !line.trim().is_empty()) {
            let row = csv_fields(line)
                .and_then(|fields| ResultRow::from_csv(&fields))
                .map_err(|why| format!("line {}: {why}", index + 1))?;
            table.insert(row);
        }
        Ok(table)
    }

    /// Adds `row`, replacing the row of the same name.
    pub fn insert(&mut self, row: ResultRow) {
        self.rows.insert(row.name.clone(), row);
    }

    /// Merges `other` in: a finished row replaces a failed one of the same name, never the
    /// other way round; between two of the same kind, `other`'s wins.
    pub fn merge(&mut self, other: ResultsTable) {
        for (name, row) in other.rows {
            let keep_ours = self
                .rows
                .get(&name)
                .is_some_and(|ours| ours.succeeded() && !row.succeeded());
            if !keep_ours {
                self.rows.insert(name, row);
            }
        }
    }

    /// The row of image `name`.
    pub fn get(&self, name: &str) -> Option<&ResultRow> {
        self.rows.get(name)
    }

    /// Every row, in name order.
    pub fn rows(&self) -> impl Iterator<Item = &ResultRow> {
        self.rows.values()
    }

    /// The table as CSV, header first.
    pub fn to_csv(&self) -> String {
        let mut text = format!("{CSV_HEADER}\n");
        for row in self.rows.values() {
            text.push_str(&row.to_csv());
            text.push('\n');
        }
        text
    }

    /// The table as JSON lines, one object per row.
    pub fn to_json_lines(&self) -> String {
        self.rows
            .values()
            .map(|row| serde_json::to_string(row).expect("rows serialise") + "\n")
            .collect()
    }

    /// Writes `csv` and the JSON lines beside it (`.jsonl`), both or neither.
    pub fn save(&self, csv: &Path) -> Result<(), DatasetError> {
        let jsonl = csv.with_extension("jsonl");
        write_all_atomically(&[
            (csv, self.to_csv().as_bytes()),
            (&jsonl, self.to_json_lines().as_bytes()),
        ])
        .map_err(|error| DatasetError::Results {
            path: csv.display().to_string(),
            why: error.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn row(name: &str, psnr: f64, error: &str) -> ResultRow {
        ResultRow {
            name: name.into(),
            width: 64,
            height: 48,
            sites: 100,
            bpp: 4.1667,
            psnr,
            ssim: 0.9,
            training_s: 1.5,
            iterations: 40,
            seed: 0,
            device: "wgpu, CPU adapter (llvmpipe)".into(),
            error: error.into(),
        }
    }

    #[test]
    fn a_table_reads_back_what_it_wrote() {
        let mut table = ResultsTable::default();
        table.insert(row("b.png", 30.0, ""));
        table.insert(row("a, \"odd\".png", 31.5, ""));
        table.insert(row("c.jpg", 0.0, "c.jpg: not an image, \"really\""));
        let text = table.to_csv();
        assert_eq!(ResultsTable::parse(&text), Ok(table.clone()));
        assert_eq!(text.lines().count(), 4);
        assert_eq!(table.to_json_lines().lines().count(), 3);
        let summary = table.summary(Some(Duration::from_secs(3)));
        assert_eq!((summary.fitted, summary.failed), (2, 1));
        assert!((summary.mean_psnr - 30.75).abs() < 1e-9);
        assert!(summary.to_string().ends_with("mean PSNR: 30.7500 dB"));
    }

    #[test]
    fn a_damaged_table_is_an_error_not_a_guess() {
        for text in [
            "",
            "name,psnr\nx,1\n",
            &format!("{CSV_HEADER}\na.png,1,2\n"),
            &format!("{CSV_HEADER}\n\"a.png,1,2,3,4,5,6,7,8,9,10,11\n"),
            &format!("{CSV_HEADER}\na.png,x,2,3,4,5,6,7,8,9,d,\n"),
        ] {
            assert!(ResultsTable::parse(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn merging_keeps_a_finished_row_over_a_failed_one() {
        let mut merged = ResultsTable::default();
        merged.insert(row("a.png", 30.0, ""));
        merged.insert(row("b.png", 0.0, "failed"));
        let mut other = ResultsTable::default();
        other.insert(row("a.png", 0.0, "failed later"));
        other.insert(row("b.png", 33.0, ""));
        other.insert(row("c.png", 34.0, ""));
        merged.merge(other);
        let psnr: Vec<f64> = merged.rows().map(|r| r.psnr).collect();
        assert_eq!(psnr, vec![30.0, 33.0, 34.0]);
    }
}
