//! Running the `sad` binary as a user would, for the CLI tests.
#![allow(dead_code)]

use std::process::{Command, Output};

/// The test data folder.
pub const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");

/// Runs `sad` with `args` and waits for it.
pub fn sad(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sad"))
        .args(args)
        .output()
        .expect("sad runs")
}

/// The last line of `bytes` (stdout or stderr).
pub fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string()
}

/// Asserts a failed run that printed exactly one error line, containing `needle`, and no panic.
pub fn assert_one_error(out: &Output, needle: &str, case: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{case}: succeeded\n{stderr}");
    assert!(!stderr.contains("panicked"), "{case}: {stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{case}: {stderr}");
    assert!(
        errors[0].contains(needle),
        "{case}: wanted `{needle}` in {stderr}"
    );
}

/// A fresh scratch folder for one test of this process.
pub fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sad-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Whether the device `sad` picks (`$BURN_SAD_DEVICE`, else auto) runs the CubeCL kernels; where
/// it does not, a line on stderr names the `test` that skips its part.
pub fn runs_kernels(test: &str) -> bool {
    use burn_sad::device::{DeviceChoice, select_device, uses_fused_kernels};
    let choice = DeviceChoice::from_env().expect("valid BURN_SAD_DEVICE");
    let runs = uses_fused_kernels(&select_device(choice).expect("a device").0);
    if !runs {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "{test}: not run on this device: it has no CubeCL kernels (the reference ops run)"
        );
    }
    runs
}
