//! Which images a data-set fit takes: the paths, folders and globs given, expanded, and the
//! share of them one shard of an array job fits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::DatasetError;

/// File extensions (lower case) of the images a folder or glob contributes.
pub const IMAGE_EXTENSIONS: [&str; 3] = ["png", "jpg", "jpeg"];

fn is_image(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

fn has_glob_characters(path: &Path) -> bool {
    path.to_string_lossy().contains(['*', '?', '['])
}

/// The images `inputs` name, sorted by path, each once: a file as it is (whatever its
/// extension: its content decides), a folder's PNG and JPEG files (not its subfolders'), and a
/// glob's PNG and JPEG matches (for patterns the shell left unexpanded, e.g. quoted). Two images
/// whose outputs would have the same name (`<stem>.png`) are an error, as are an input that
/// names nothing and a set with no image.
pub fn collect_images(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, DatasetError> {
    let mut images = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let entries = std::fs::read_dir(input).map_err(|error| DatasetError::Input {
                input: input.display().to_string(),
                why: error.to_string(),
            })?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .filter(|path| path.is_file() && is_image(path))
                .collect();
            found.sort();
            images.extend(found);
        } else if !input.exists() && has_glob_characters(input) {
            let pattern = input.to_string_lossy();
            let matches = glob::glob(&pattern).map_err(|error| DatasetError::Input {
                input: pattern.to_string(),
                why: format!("not a valid pattern: {}", error.msg),
            })?;
            let found: Vec<PathBuf> = matches
                .filter_map(Result::ok)
                .filter(|path| path.is_file() && is_image(path))
                .collect();
            if found.is_empty() {
                return Err(DatasetError::Input {
                    input: pattern.to_string(),
                    why: "matches no PNG or JPEG file".into(),
                });
            }
            images.extend(found);
        } else if input.is_file() {
            images.push(input.clone());
        } else {
            return Err(DatasetError::Input {
                input: input.display().to_string(),
                why: "no such file or folder".into(),
            });
        }
    }
    images.sort();
    images.dedup();
    if images.is_empty() {
        return Err(DatasetError::NoImages);
    }
    let mut by_output: BTreeMap<String, &PathBuf> = BTreeMap::new();
    for image in &images {
        let stem = output_stem(image)?;
        if let Some(first) = by_output.insert(stem.clone(), image) {
            return Err(DatasetError::SameOutputs {
                first: first.display().to_string(),
                second: image.display().to_string(),
                stem,
            });
        }
    }
    Ok(images)
}

/// The name an image's outputs take: `<stem>.png` and `<stem>_sites.txt` (or `.sadp`).
pub fn output_stem(image: &Path) -> Result<String, DatasetError> {
    image
        .file_stem()
        .and_then(|stem| stem.to_str())
        .filter(|stem| !stem.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| DatasetError::Input {
            input: image.display().to_string(),
            why: "no file name to name the outputs after".into(),
        })
}

/// The name an image's row goes by: its file name.
pub fn row_name(image: &Path) -> String {
    image.file_name().map_or_else(
        || image.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Shard `index` of `count` (1-based, as `I/N` on the command line): the images whose file
/// name hashes to it, so that a shard's share does not depend on which other images the set
/// holds or in which order they were listed, and the shards of one set cover it exactly once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard, 1 ..= `count`.
    pub index: u32,
    /// How many shards the set is split into.
    pub count: u32,
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || format!("`{text}` is not a shard I/N with 1 ≤ I ≤ N (e.g. 3/8)");
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let index: u32 = index.trim().parse().map_err(|_| bad())?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }
}

impl Shard {
    /// Whether image `name` (its file name) belongs to this shard.
    pub fn holds(&self, name: &str) -> bool {
        // FNV-1a: stable across runs, platforms and Rust versions, unlike std's hasher.
        let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        hash % u64::from(self.count) == u64::from(self.index - 1)
    }

    /// The images of `images` in this shard.
    pub fn select(&self, images: &[PathBuf]) -> Vec<PathBuf> {
        images
            .iter()
            .filter(|image| self.holds(&row_name(image)))
            .cloned()
            .collect()
    }

    /// The stem of this shard's results files: `results.shard-I-of-N`.
    pub fn results_stem(&self) -> String {
        format!("results.shard-{}-of-{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_a_set_exactly_once() {
        let images: Vec<PathBuf> = (0..500)
            .map(|i| PathBuf::from(format!("kodim{i:02}.png")))
            .collect();
        for count in [1u32, 2, 3, 7] {
            let mut seen = Vec::new();
            for index in 1..=count {
                let shard: Shard = format!("{index}/{count}").parse().unwrap();
                let share = shard.select(&images);
                // Roughly even: no shard holds more than twice its share.
                assert!(share.len() <= 2 * images.len() / count as usize + 1);
                seen.extend(share);
            }
            seen.sort();
            let mut all = images.clone();
            all.sort();
            assert_eq!(seen, all, "{count} shards");
        }
    }

    #[test]
    fn shard_text_is_checked() {
        assert_eq!("2/5".parse(), Ok(Shard { index: 2, count: 5 }));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "-1/2", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
