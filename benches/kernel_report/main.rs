//! The CUDA kernel report, without a GPU: every kernel variant of
//! `burn_sad::kernel_report::cuda_kernels`, compiled to PTX on this host by CubeCL's LLVM/NVPTX
//! path, assembled by `ptxas` and disassembled by `cuobjdump -sass`, as the driver would for a
//! device of that compute capability. For each: registers, spills, shared memory, the static
//! instruction count, the loops found in the SASS, and the instructions executed per output (a
//! pixel, voxel, cell or site) by class, from the static code weighted by the trip counts of the
//! loops that enclose it; then CubeCL's and `ptxas`' compile times.
//!
//! The counts are checked against a baseline file: a spill, a kernel missing from it, a loop
//! structure other than the one the kernel declares, or a count per output more than 5 % above
//! the baseline's fails the run (exit 1).
//!
//! ```text
//! cargo bench --profile dev --no-default-features --features cuda --bench kernel_report -- \
//!     [--arch 90] [--baseline FILE] [--write-baseline] [--keep DIR] [--only TEXT] \
//!     [--ptxas PATH] [--cuobjdump PATH]
//! ```
//!
//! `ptxas` and `cuobjdump` come from the PyPI packages `nvidia-cuda-nvcc`,
//! `nvidia-cuda-cuobjdump` and `nvidia-cuda-nvdisasm` (see CONTRIBUTING.md); by default they are
//! looked up on `PATH`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use burn_sad::kernel_report::{CudaKernel, LoopTrips, cuda_kernels};

mod sass;

use sass::{CLASSES, Sass};

/// How far a count per output may rise above the baseline before the run fails.
const TOLERANCE: f64 = 0.05;

struct Args {
    arch: u32,
    baseline: PathBuf,
    write_baseline: bool,
    keep: Option<PathBuf>,
    only: Option<String>,
    ptxas: PathBuf,
    cuobjdump: PathBuf,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        arch: 90,
        baseline: PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("benches/kernel_report/baseline.tsv"),
        write_baseline: false,
        keep: None,
        only: None,
        ptxas: PathBuf::from("ptxas"),
        cuobjdump: PathBuf::from("cuobjdump"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--arch" => {
                let v = value()?;
                args.arch = v.parse().map_err(|_| format!("--arch {v}: not a number"))?;
            }
            "--baseline" => args.baseline = PathBuf::from(value()?),
            "--write-baseline" => args.write_baseline = true,
            "--keep" => args.keep = Some(PathBuf::from(value()?)),
            "--only" => args.only = Some(value()?),
            "--ptxas" => args.ptxas = PathBuf::from(value()?),
            "--cuobjdump" => args.cuobjdump = PathBuf::from(value()?),
            // `cargo bench` passes this to every bench.
            "--bench" => {}
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(args)
}

/// One kernel's figures.
struct Row {
    name: String,
    unit: &'static str,
    registers: u32,
    spill_bytes: u32,
    shared_bytes: usize,
    sass: Sass,
    per_output: Option<BTreeMap<&'static str, f64>>,
    /// The loops found in the SASS against those the kernel declares (`2/2`, `0/1`: the
    /// compiler unrolled one; `13/data`: data-dependent loops, each counted once).
    loops: String,
    /// The count per output is a lower bound (data-dependent loops).
    lower_bound: bool,
    loop_note: Option<String>,
    compile: Duration,
    assemble: Duration,
}

impl Row {
    fn total_per_output(&self) -> Option<f64> {
        self.per_output
            .as_ref()
            .map(|classes| classes.values().sum())
    }
}

fn run(tool: &Path, args: &[&std::ffi::OsStr]) -> Result<(String, String), String> {
    let output = Command::new(tool).args(args).output().map_err(|error| {
        format!(
            "{}: {error} (see CONTRIBUTING.md for the install)",
            tool.display()
        )
    })?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        return Err(format!("{} failed: {stderr}{stdout}", tool.display()));
    }
    Ok((stdout, stderr))
}

/// `ptxas -v`'s registers and spill bytes (stores plus loads) for the one entry of a module.
fn ptxas_figures(log: &str) -> Result<(u32, u32), String> {
    let number_before = |line: &str, word: &str| -> Option<u32> {
        let at = line.find(word)?;
        line[..at].split_whitespace().last()?.parse().ok()
    };
    let registers = log
        .lines()
        .find_map(|line| number_before(line, " registers"))
        .ok_or_else(|| format!("no register count in ptxas' output:\n{log}"))?;
    let spills = log
        .lines()
        .filter_map(|line| {
            Some(
                number_before(line, " bytes spill stores")?
                    + number_before(line, " bytes spill loads")?,
            )
        })
        .sum();
    Ok((registers, spills))
}

fn report(kernel: &CudaKernel, args: &Args, dir: &Path) -> Result<Row, String> {
    let stem = kernel.name.replace('.', "_");
    let ptx = dir.join(format!("{stem}.ptx"));
    let cubin = dir.join(format!("{stem}.cubin"));
    std::fs::write(&ptx, &kernel.ptx).map_err(|error| format!("{}: {error}", ptx.display()))?;
    let target = ptx_target(&kernel.ptx).unwrap_or_else(|| format!("sm_{}", args.arch));
    let start = Instant::now();
    let (_, log) = run(
        &args.ptxas,
        &[
            format!("-arch={target}").as_ref(),
            "-v".as_ref(),
            "-o".as_ref(),
            cubin.as_os_str(),
            ptx.as_os_str(),
        ],
    )?;
    let assemble = start.elapsed();
    let (registers, spill_bytes) = ptxas_figures(&log)?;
    let (listing, _) = run(&args.cuobjdump, &["-sass".as_ref(), cubin.as_os_str()])?;
    std::fs::write(dir.join(format!("{stem}.sass")), &listing)
        .map_err(|error| format!("{stem}.sass: {error}"))?;
    let sass = Sass::parse(&listing)?;
    let units = kernel.cube_dim.iter().product::<u32>() as f64;
    let depth = sass.depth();
    // The trips that weigh the SASS's loops, outermost first, or why they cannot.
    let (trips, loops, lower_bound) = match &kernel.work.loops {
        LoopTrips::Fixed(declared) => {
            let declared: Vec<usize> = declared
                .iter()
                .copied()
                .filter(|&trips| trips > 1)
                .collect();
            let loops = format!("{depth}/{}", declared.len());
            let trips = (depth <= declared.len()).then(|| declared[..depth].to_vec());
            (trips, loops, false)
        }
        LoopTrips::DataDependent => (Some(vec![1; depth]), format!("{depth}/data"), true),
    };
    let (per_output, loop_note) = match trips {
        Some(trips) => {
            let scale = units / kernel.work.outputs as f64;
            let per_unit = sass.executed(&trips);
            (
                Some(
                    per_unit
                        .into_iter()
                        .map(|(class, n)| (class, n * scale))
                        .collect(),
                ),
                None,
            )
        }
        None => (
            None,
            Some(format!(
                "{}: the SASS has loops {depth} deep, more than the kernel declares ({:?})",
                kernel.name, kernel.work.loops
            )),
        ),
    };
    Ok(Row {
        name: kernel.name.clone(),
        unit: kernel.work.unit,
        registers,
        spill_bytes,
        shared_bytes: kernel.shared_bytes,
        sass,
        per_output,
        loops,
        lower_bound,
        loop_note,
        compile: kernel.compile_time,
        assemble,
    })
}

/// The `.target` the PTX names (`sm_90a`), which `ptxas -arch` must match.
fn ptx_target(ptx: &str) -> Option<String> {
    ptx.lines()
        .find_map(|line| line.trim().strip_prefix(".target "))
        .map(|target| {
            target
                .split(',')
                .next()
                .unwrap_or(target)
                .trim()
                .to_string()
        })
}

fn print_table(rows: &[Row], arch: u32) {
    println!("## CUDA kernels for sm_{arch}: ptxas and cuobjdump on the host\n");
    print!("| kernel | regs | spill B | smem B | static | loops | per output |");
    for class in CLASSES {
        print!(" {class} |");
    }
    println!(" CubeCL+LLVM ms | ptxas ms |");
    print!("|---|--:|--:|--:|--:|--:|--:|");
    for _ in CLASSES {
        print!("--:|");
    }
    println!("--:|--:|");
    for row in rows {
        print!(
            "| {} | {} | {} | {} | {} | {} |",
            row.name,
            row.registers,
            row.spill_bytes,
            row.shared_bytes,
            row.sass.static_count(),
            row.loops
        );
        match &row.per_output {
            Some(classes) => {
                let bound = if row.lower_bound { "≥ " } else { "" };
                print!(
                    " {bound}{:.1} / {} |",
                    row.total_per_output().unwrap_or(0.0),
                    row.unit
                );
                for class in CLASSES {
                    print!(" {:.1} |", classes.get(class).copied().unwrap_or(0.0));
                }
            }
            None => {
                print!(" n/a |");
                for _ in CLASSES {
                    print!(" |");
                }
            }
        }
        println!(
            " {:.0} | {:.0} |",
            row.compile.as_secs_f64() * 1e3,
            row.assemble.as_secs_f64() * 1e3
        );
    }
    let compile: Duration = rows.iter().map(|row| row.compile).sum();
    let assemble: Duration = rows.iter().map(|row| row.assemble).sum();
    println!(
        "\nloops: found in the SASS / declared by the kernel (fewer found: the compiler unrolled \
         the innermost; `data`: data-dependent loops, each counted once, so the count per output \
         is a lower bound, ≥). Per output: instructions one unit executes, times units per \
         cube, over outputs per cube.\n{} kernels: CubeCL + LLVM {:.2} s, ptxas {:.2} s on this host.",
        rows.len(),
        compile.as_secs_f64(),
        assemble.as_secs_f64()
    );
}

/// The baseline: kernel name → (registers, instructions per output).
fn read_baseline(path: &Path) -> Result<BTreeMap<String, (u32, f64)>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let mut baseline = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let parsed = match fields[..] {
            [name, registers, per_output] => registers
                .parse()
                .ok()
                .zip(per_output.parse().ok())
                .map(|pair| (name.to_string(), pair)),
            _ => None,
        };
        let (name, pair) = parsed.ok_or_else(|| {
            format!(
                "{}:{}: expected `kernel<TAB>registers<TAB>per output`",
                path.display(),
                number + 1
            )
        })?;
        baseline.insert(name, pair);
    }
    Ok(baseline)
}

fn write_baseline(path: &Path, rows: &[Row], arch: u32) -> Result<(), String> {
    let mut text = format!(
        "# The CUDA kernel report's baseline for sm_{arch}: kernel, registers, instructions per\n\
         # output. Written by `kernel_report --write-baseline`; CI fails where a count rises more\n\
         # than {:.0} % above it. Commit it with the change that moves a count.\n",
        TOLERANCE * 100.0
    );
    for row in rows {
        if let Some(total) = row.total_per_output() {
            text.push_str(&format!("{}\t{}\t{:.1}\n", row.name, row.registers, total));
        }
    }
    std::fs::write(path, text).map_err(|error| format!("{}: {error}", path.display()))
}

/// Every reason the run fails: spills, loop structures other than declared, kernels missing
/// from the baseline, counts above it.
fn problems(rows: &[Row], baseline: &BTreeMap<String, (u32, f64)>) -> Vec<String> {
    let mut problems = Vec::new();
    for row in rows {
        if row.spill_bytes > 0 {
            problems.push(format!("{}: {} bytes of spills", row.name, row.spill_bytes));
        }
        if let Some(note) = &row.loop_note {
            problems.push(note.clone());
        }
        let Some(total) = row.total_per_output() else {
            continue;
        };
        match baseline.get(&row.name) {
            None => problems.push(format!(
                "{}: not in the baseline (run with --write-baseline and commit it)",
                row.name
            )),
            Some(&(_, base)) if total > base * (1.0 + TOLERANCE) => problems.push(format!(
                "{}: {total:.1} instructions per {}, {:.1} % above the baseline's {base:.1}",
                row.name,
                row.unit,
                (total / base - 1.0) * 100.0
            )),
            Some(_) => {}
        }
    }
    problems
}

fn main() -> ExitCode {
    match main_result() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("kernel_report: {error}");
            ExitCode::FAILURE
        }
    }
}

fn main_result() -> Result<bool, String> {
    let args = parse_args()?;
    let dir = match &args.keep {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("kernel_report-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir).map_err(|error| format!("{}: {error}", dir.display()))?;
    let kernels = cuda_kernels(args.arch).map_err(|error| error.to_string())?;
    let mut rows = Vec::new();
    for kernel in &kernels {
        if args
            .only
            .as_ref()
            .is_some_and(|only| !kernel.name.contains(only.as_str()))
        {
            continue;
        }
        rows.push(report(kernel, &args, &dir)?);
    }
    if args.keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    print_table(&rows, args.arch);
    if args.write_baseline {
        write_baseline(&args.baseline, &rows, args.arch)?;
        println!("\nWrote {}.", args.baseline.display());
        return Ok(true);
    }
    let baseline = read_baseline(&args.baseline)?;
    let problems = problems(&rows, &baseline);
    if problems.is_empty() {
        println!(
            "\nNo spills; every count within {:.0} % of {}.",
            TOLERANCE * 100.0,
            args.baseline.display()
        );
        return Ok(true);
    }
    println!();
    for problem in &problems {
        println!("FAIL {problem}");
    }
    Ok(false)
}
