//! The browser viewer's native side: every kernel compiles to WGSL whose bindings and info
//! buffer match the argument lists the page binds by, the server serves the page, the manifest
//! and the two given files and nothing else, and `sad view` checks its inputs and exports the
//! page. (The page itself runs in Chromium: `tests/browser/`.)

use crate::cli_support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use burn_sad_viewer::{ExportedKernel, manifest_json, viewer_kernels};
use cli_support::{DATA, assert_one_error, sad, scratch};

/// The length of the WGSL array `name` in the info struct, 0 where the struct has none.
fn info_array(kernel: &ExportedKernel, name: &str) -> usize {
    let line = kernel
        .wgsl
        .lines()
        .find(|line| line.starts_with("struct info_st"))
        .unwrap_or_else(|| panic!("{}: no info struct", kernel.name));
    let Some(at) = line.find(&format!("{name}: array<")) else {
        return 0;
    };
    let rest = &line[at..];
    let count = rest[rest.find(", ").unwrap() + 2..rest.find('>').unwrap()].to_string();
    count.parse().unwrap()
}

fn even(n: usize) -> usize {
    n.div_ceil(2) * 2
}

#[test]
fn every_kernel_compiles_with_the_bindings_and_info_its_arguments_say() {
    let kernels = viewer_kernels().unwrap();
    let names: Vec<_> = kernels.iter().map(|k| k.name).collect();
    for needed in [
        "pack_full",
        "pack_ranking",
        "exact_ranking",
        "seed",
        "flood",
        "flood_mirror",
        "candidate_pass",
        "render",
        "winners",
        "colours_cells",
        "colours_tau",
        "colours_anisotropy",
        "mark_rings",
        "mark_centres",
        "rgba",
        "init_candidates",
        "pack_gradients",
        "pack_densify",
        "pack_removal",
        "backward",
        "statistics_densify",
        "statistics_removal",
        "tau_find",
        "tau_list",
        "adam",
        "prune_start",
        "prune_histogram",
        "prune_choose",
        "prune_mark",
    ] {
        assert!(names.contains(&needed), "{needed} missing from {names:?}");
    }
    for kernel in &kernels {
        let name = kernel.name;
        let tensors: Vec<_> = kernel.args.iter().filter(|a| a.kind == "tensor").collect();
        let count = |kind: &str| kernel.args.iter().filter(|a| a.kind == kind).count();
        let [x, y, z] = kernel.workgroup;
        assert!(
            kernel
                .wgsl
                .contains(&format!("@workgroup_size({x}, {y}, {z})")),
            "{name}: workgroup"
        );
        // One binding per tensor, in order, then the read-only info buffer.
        for (binding, tensor) in tensors.iter().enumerate() {
            let element = match tensor.vector {
                1 => tensor.element.to_string(),
                n => format!("vec{n}<{}>", tensor.element),
            };
            let declared = format!("@group(0) @binding({binding}) var<storage, read_write>");
            let line = kernel
                .wgsl
                .lines()
                .find(|line| line.starts_with(&declared))
                .unwrap_or_else(|| panic!("{name}: no binding {binding}"));
            // Atomic sums: integer words (f32 ones emulated on u32, see `wgsl_fixups`).
            let word = if tensor.element == "f32" {
                "u32"
            } else {
                tensor.element
            };
            assert!(
                line.ends_with(&format!("array<{element}>;"))
                    || line.ends_with(&format!("array<atomic<{word}>>;")),
                "{name}: binding {binding} ({}) is `{line}`",
                tensor.name
            );
        }
        assert!(
            kernel.wgsl.contains(&format!(
                "@group(0) @binding({}) var<storage, read> info_var: info_st;",
                tensors.len()
            )),
            "{name}: info binding"
        );
        assert!(!kernel.wgsl.contains("atomic<f32>"), "{name}: f32 atomics");
        // Each tensor adds its length and rank to the usize scalars.
        assert_eq!(
            info_array(kernel, "scalars_usize"),
            even(2 * tensors.len() + count("usize")),
            "{name}: usize scalars"
        );
        assert_eq!(
            info_array(kernel, "scalars_f32"),
            even(count("f32")),
            "{name}: f32"
        );
        assert_eq!(
            info_array(kernel, "scalars_u32"),
            even(count("u32")),
            "{name}: u32"
        );
        assert_eq!(
            info_array(kernel, "scalars_i32"),
            even(count("i32")),
            "{name}: i32"
        );
        assert_eq!(
            info_array(kernel, "static_meta"),
            even(3 * tensors.len()),
            "{name}: static metadata"
        );
        // WebGPU has no f16 without an extension, no 64-bit types and no float atomics.
        let mut banned = vec!["enable f16".to_string(), "atomic<f32>".to_string()];
        for ty in ["u64", "i64", "f64"] {
            banned.extend([format!("<{ty}"), format!(": {ty}"), format!("{ty}(")]);
        }
        for feature in &banned {
            assert!(
                !kernel.wgsl.contains(feature.as_str()),
                "{name} uses {feature}"
            );
        }
    }
    let manifest: serde_json::Value = serde_json::from_str(&manifest_json().unwrap()).unwrap();
    assert_eq!(manifest["kernels"].as_array().unwrap().len(), kernels.len());
}

/// One HTTP/1.0 request; returns the status code and the body.
fn request(address: SocketAddr, method: &str, path: &str) -> (u16, Vec<u8>) {
    request_to(address, method, path, &address.to_string())
}

/// [`request`] with `host` as its `Host` header.
fn request_to(address: SocketAddr, method: &str, path: &str, host: &str) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(address).unwrap();
    write!(stream, "{method} {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").unwrap();
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).unwrap();
    let end = reply
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| {
            panic!(
                "{method} {path}: a reply of {} bytes without a header: {:?}",
                reply.len(),
                String::from_utf8_lossy(&reply)
            )
        });
    let head = String::from_utf8_lossy(&reply[..end]).to_string();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, reply[end + 4..].to_vec())
}

/// A `sad view` process on a free loopback port, killed when dropped.
struct Viewer(std::process::Child);

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_server_serves_the_page_its_kernels_and_the_two_files_only() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};

    let sites = format!("{DATA}/sad/cat160x96_sites.txt");
    let target = format!("{DATA}/sad/cat160x96.png");
    let mut viewer = Viewer(
        Command::new(env!("CARGO_BIN_EXE_sad"))
            .args(["view", &sites, "--target", &target, "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("sad view starts"),
    );
    // Kept open to the end, as a terminal would be.
    let mut stdout = std::io::BufReader::new(viewer.0.stdout.take().unwrap());
    let url = stdout
        .by_ref()
        .lines()
        .map(|line| line.unwrap())
        .find(|line| line.starts_with("http://"))
        .expect("sad view prints its address");
    let host = url.trim_start_matches("http://").split('/').next().unwrap();
    let address: SocketAddr = host.parse().unwrap();
    assert_eq!(
        url,
        format!("http://{address}/?sites=sites.txt&target=target")
    );
    let (status, page) = request(address, "GET", "/");
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&page).contains("<canvas id=\"view\""));
    for script in ["viewer.js", "gpu.js", "sites.js", "viewer.css"] {
        assert_eq!(
            request(address, "GET", &format!("/{script}")).0,
            200,
            "{script}"
        );
    }
    let (status, manifest) = request(address, "GET", "/kernels.json?v=1");
    assert_eq!(status, 200);
    let manifest: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    assert!(
        manifest["kernels"][0]["wgsl"]
            .as_str()
            .unwrap()
            .contains("@compute")
    );
    assert_eq!(
        request(address, "GET", "/sites.txt").1,
        std::fs::read(&sites).unwrap()
    );
    assert!(request(address, "GET", "/target").1.starts_with(b"\x89PNG"));
    for path in [
        "/../Cargo.toml",
        "/Cargo.toml",
        "/tests/data/sad/astro128.png",
    ] {
        assert_eq!(request(address, "GET", path).0, 404, "{path}");
    }
    assert_eq!(request(address, "POST", "/sites.txt").0, 405);
    // Another name for this address (DNS rebinding), another port, no port or no Host at all
    // is refused; localhost with the port is this server.
    let port = address.port();
    for host in [
        format!("evil.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        format!("127.0.0.1:{}", port ^ 1),
        "127.0.0.1".to_string(),
    ] {
        assert_eq!(
            request_to(address, "GET", "/sites.txt", &host).0,
            403,
            "{host}"
        );
    }
    let mut stream = TcpStream::connect(address).unwrap();
    write!(stream, "GET /sites.txt HTTP/1.0\r\n\r\n").unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 403"), "no Host header: {reply}");
    let localhost = format!("localhost:{port}");
    assert_eq!(request_to(address, "GET", "/sites.txt", &localhost).0, 200);
}

#[test]
fn sad_view_checks_its_inputs_and_exports_the_page() {
    let dir = scratch("view");
    let sites = format!("{DATA}/sad/cat160x96_sites.txt");
    let missing = dir.join("missing_sites.txt");
    let run = sad(&["view", missing.to_str().unwrap()]);
    assert_one_error(&run, "missing_sites.txt", "a missing file");
    let wrong = format!("{DATA}/sad/astro128.png");
    let run = sad(&["view", &sites, "--target", &wrong]);
    assert_one_error(
        &run,
        "is 128×128 but the sites file is of a 160×96",
        "a target of another size",
    );
    // A port another program holds: one line, not a panic.
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port().to_string();
    let run = sad(&["view", &sites, "--port", &port]);
    assert_one_error(&run, &format!("binding 127.0.0.1:{port}"), "a port in use");
    drop(holder);
    let export = dir.join("site");
    let target = format!("{DATA}/sad/cat160x96.png");
    let run = sad(&[
        "view",
        &sites,
        "--target",
        &target,
        "--export",
        export.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for file in [
        "index.html",
        "viewer.js",
        "gpu.js",
        "sites.js",
        "viewer.css",
        "kernels.json",
        "sites.txt",
        "target",
    ] {
        assert!(export.join(file).is_file(), "{file} not written");
    }
    assert!(
        String::from_utf8_lossy(&run.stdout).contains("index.html?sites=sites.txt&target=target")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sad_view_train_checks_its_inputs_and_exports_the_trainer_page() {
    let dir = scratch("train-view");
    let photo = format!("{DATA}/sad/astro64.png");
    let other = format!("{DATA}/sad/cat160x96.png");
    let missing = dir.join("missing.png");
    let run = sad(&["view", "--train", missing.to_str().unwrap()]);
    assert_one_error(&run, "missing.png", "a missing photo");
    let run = sad(&["view", "--train", &photo, "--mask", &other]);
    assert_one_error(
        &run,
        "is 160×96 but the photo is 64×64",
        "a mask of another size",
    );
    let sites = format!("{DATA}/sad/cat160x96_sites.txt");
    let run = sad(&["view", &sites, "--mask", &other]);
    assert_one_error(&run, "--mask goes with --train", "a mask without --train");
    let export = dir.join("site");
    let run = sad(&[
        "view",
        "--train",
        &photo,
        "--mask",
        &photo,
        "--export",
        export.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for file in [
        "train.html",
        "train_page.js",
        "trainer.js",
        "target.js",
        "schedule.js",
        "bench.html",
        "bench.js",
        "kernels.json",
        "target",
        "mask",
    ] {
        assert!(export.join(file).is_file(), "{file} not written");
    }
    assert!(String::from_utf8_lossy(&run.stdout).contains("train.html?image=target&mask=mask"));
    // The manifest carries the schedule table the Rust trainer reads.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(export.join("kernels.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["training"]["constants"]["tau_diffusion_passes"],
        burn_sad::sad::fit::TRAINER_CONSTANTS.tau_diffusion_passes
    );
    assert_eq!(manifest["training"]["config"]["DEFAULT_ITERS"], 4000);
    std::fs::remove_dir_all(&dir).unwrap();
}
