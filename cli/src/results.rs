//! `sad results`: merges the results tables of data-set fits (shards of one set, say) and
//! prints their summary.

use std::path::PathBuf;

use anyhow::{Result, bail};
use burn_sad::sad::dataset::ResultsTable;
use clap::Args;

/// `sad results` options.
#[derive(Args)]
pub struct ResultsArgs {
    /// Results tables (`results*.csv`), or folders: every `results*.csv` inside.
    #[arg(required = true, value_name = "TABLE_OR_DIR")]
    pub tables: Vec<PathBuf>,
    /// Write the merged table there (CSV, with the JSON lines beside it as `.jsonl`).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// The tables `args` names, in order: files as given, a folder's `results*.csv` by name.
fn table_files(args: &ResultsArgs) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in &args.tables {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .filter(|file| {
                    file.is_file()
                        && file.extension().is_some_and(|e| e == "csv")
                        && file
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with("results"))
                })
                .collect();
            if found.is_empty() {
                bail!("{}: holds no results*.csv", path.display());
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Merges the tables (a finished row wins over a failed one of the same image), writes the
/// merged table if asked, and prints the summary, its last line `mean PSNR: <value> dB`.
pub fn results_command(args: ResultsArgs) -> Result<()> {
    let files = table_files(&args)?;
    let mut merged = ResultsTable::default();
    for file in &files {
        merged.merge(ResultsTable::load(file)?);
    }
    if let Some(output) = &args.output {
        merged.save(output)?;
        println!("Saved: {}", output.display());
    }
    let failed: Vec<&str> = merged
        .rows()
        .filter(|row| !row.succeeded())
        .map(|row| row.name.as_str())
        .collect();
    if !failed.is_empty() {
        eprintln!(
            "warning: {} image(s) failed: {}",
            failed.len(),
            failed.join(", ")
        );
    }
    println!("Tables: {} | images: {}", files.len(), merged.len());
    println!("{}", merged.summary(None));
    Ok(())
}
