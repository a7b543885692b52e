#!/bin/sh
# A short libFuzzer run of each fuzz target (fuzz/), coverage-guided as cargo-fuzz builds them,
# seeded with the test data: a smoke test that the targets build and that 5 s of mutation
# finds no panic. Needs a nightly toolchain, and fails without one: the stable suite runs the
# targets' bodies over the corpus and mutants of it (tests/it/fuzz_bodies.rs), this the fuzzers.
set -eu
cd "$(dirname "$0")/../fuzz"
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  echo "fuzz smoke: no nightly toolchain (rustup toolchain install nightly); libFuzzer needs one" >&2
  exit 1
fi
# The flags cargo-fuzz passes, without a sanitizer (the parsers are safe Rust).
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing"
cp ../Cargo.lock Cargo.lock
# An explicit target keeps RUSTFLAGS off build scripts and proc macros, as cargo-fuzz does.
host=$(rustc +nightly -vV | sed -n 's/^host: //p')
# A debug build: a 5 s smoke finds as much unoptimised, and the dependencies build in half the
# time of a release build.
cargo +nightly build --target "$host" --bin sites_parser --bin image_decoder
corpus=$(mktemp -d)
mkdir -p "$corpus/sites" "$corpus/images"
cp ../tests/data/sad/*_sites.txt ../tests/data/sad/*_sites.sadp "$corpus/sites/"
cp ../tests/data/sad/*.png "$corpus/images/"
"target/$host/debug/sites_parser" "$corpus/sites" -max_total_time=5 -max_len=65536
"target/$host/debug/image_decoder" "$corpus/images" -max_total_time=5 -rss_limit_mb=2048
rm -rf "$corpus"
