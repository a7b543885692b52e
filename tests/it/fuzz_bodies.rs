//! The fuzz targets' bodies (`fuzz/bodies/`) on the stable toolchain: over the corpus the fuzz
//! smoke starts from (the test data's sites files and photos) and over inputs made from it by
//! seeded mutations (bit flips, truncations, splices, repeated and deleted spans, edge-case
//! numbers), so the contracts the fuzzers check hold in every CI run, nightly or not.

#[path = "../../fuzz/bodies/image_decoder.rs"]
mod image_decoder;
#[path = "../../fuzz/bodies/sites_parser.rs"]
mod sites_parser;

use std::path::PathBuf;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sad");

/// The corpus files of `DATA` whose names end in `suffix`.
fn corpus(suffix: &str) -> Vec<Vec<u8>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(DATA)
        .expect("test data")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.to_string_lossy().ends_with(suffix))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no {suffix} files in {DATA}");
    paths
        .iter()
        .map(|path| std::fs::read(path).expect("corpus file"))
        .collect()
}

/// A small deterministic generator (SplitMix64), so a failing input reproduces.
struct Mutator(u64);

impl Mutator {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// `input` changed in one to four places.
    fn mutate(&mut self, input: &[u8], tokens: &[&[u8]]) -> Vec<u8> {
        let mut out = input.to_vec();
        for _ in 0..1 + self.below(4) {
            let at = self.below(out.len() + 1);
            match self.below(6) {
                0 if !out.is_empty() => {
                    let i = at.min(out.len() - 1);
                    out[i] ^= 1 << self.below(8);
                }
                1 => out.truncate(at),
                2 => {
                    let len = self.below(64).min(out.len() - at);
                    out.drain(at..at + len);
                }
                3 => {
                    let from = self.below(out.len());
                    let len = self.below(256).min(out.len() - from);
                    let span = out[from..from + len].to_vec();
                    out.splice(at..at, span);
                }
                4 => {
                    let token = tokens[self.below(tokens.len())];
                    out.splice(at..at, token.iter().copied());
                }
                _ => {
                    let byte = self.next() as u8;
                    out.insert(at, byte);
                }
            }
        }
        out
    }
}

/// `check` over the corpus, each file's head (the fuzzers' short inputs), and `mutations`
/// mutants of them.
fn run(check: fn(&[u8]), corpus: &[Vec<u8>], tokens: &[&[u8]], mutations: usize, seed: u64) {
    let mut inputs: Vec<Vec<u8>> = corpus.to_vec();
    inputs.extend(
        corpus
            .iter()
            .map(|file| file[..file.len().min(4096)].to_vec()),
    );
    inputs.push(Vec::new());
    let mut mutator = Mutator(seed);
    for i in 0..mutations {
        let parent = &inputs[mutator.below(inputs.len())];
        // Mutants of short heads keep each check fast; a few start from whole files.
        let parent = if i % 16 == 0 {
            parent.clone()
        } else {
            parent[..parent.len().min(2048)].to_vec()
        };
        inputs.push(mutator.mutate(&parent, tokens));
    }
    for (i, input) in inputs.iter().enumerate() {
        let caught = std::panic::catch_unwind(|| check(input));
        if caught.is_err() {
            let path = std::env::temp_dir().join(format!("burn-sad-fuzz-failure-{seed}-{i}"));
            std::fs::write(&path, input).expect("write the failing input");
            panic!("input {i} broke the contract; saved to {}", path.display());
        }
    }
}

#[test]
fn sites_parser_contract_holds_on_the_corpus_and_mutants() {
    let tokens: &[&[u8]] = &[
        b"nan",
        b"inf",
        b"-inf",
        b"1e39",
        b"-0",
        b"\n",
        b" ",
        b"\t",
        b"#",
        b"\r\n",
        b"-1",
        b"2147483648",
        b"0x1p3",
        b"1e-45",
        b"SADP",
        b"\x01\x00\x00\x00",
        b"\xff\xff\xff\xff",
        b"\x00\x00\xc0\x7f",
        b"\x00\x7c",
    ];
    let mut files = corpus("_sites.txt");
    files.extend(corpus("_sites.sadp"));
    run(sites_parser::check, &files, tokens, 3000, 1);
}

#[test]
fn image_decoder_contract_holds_on_the_corpus_and_mutants() {
    let tokens: &[&[u8]] = &[
        b"\x89PNG\r\n\x1a\n",
        b"IHDR",
        b"IDAT",
        b"IEND",
        b"\xff\xd8\xff",
        b"\xff\xff\xff\xff",
        b"\x00\x00\x00\x00",
        b"\x7f\xff\xff\xff",
    ];
    run(image_decoder::check, &corpus(".png"), tokens, 1500, 2);
}
