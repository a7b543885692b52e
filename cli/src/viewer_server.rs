//! `sad view`'s web server: the pages, the kernels' manifest, a sites file or not, an optional
//! target image (the photo to train on, for the trainer page) and its mask, on one address
//! (loopback unless asked otherwise), nothing else.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use tiny_http::{Header, Method, Request, Response, Server};

use burn_sad::viewer::{MANIFEST, PAGE_FILES, ViewerError, manifest_json};

/// The name the sites file is served by.
pub const SITES_NAME: &str = "sites.txt";
/// The name the target image is served by.
pub const TARGET_NAME: &str = "target";
/// The name the trainer page's mask is served by.
pub const MASK_NAME: &str = "mask";

/// A bound viewer server (see [`ViewerServer::serve`]).
pub struct ViewerServer {
    server: Server,
    manifest: String,
    sites: Option<PathBuf>,
    target: Option<PathBuf>,
    mask: Option<PathBuf>,
}

impl ViewerServer {
    /// Binds `address` (port 0: any free port) to serve the pages, with `sites` to view,
    /// `target` to compare with or train on, and `mask` for the trainer. The files are read at
    /// each request (an edited file shows on reload); the kernels are compiled to WGSL here,
    /// once.
    pub fn bind(
        address: SocketAddr,
        sites: Option<&Path>,
        target: Option<&Path>,
        mask: Option<&Path>,
    ) -> Result<Self, ViewerError> {
        let manifest = manifest_json()?;
        let server = Server::http(address)
            .map_err(|error| ViewerError::Io(format!("binding {address}: {error}")))?;
        Ok(Self {
            server,
            manifest,
            sites: sites.map(Path::to_path_buf),
            target: target.map(Path::to_path_buf),
            mask: mask.map(Path::to_path_buf),
        })
    }

    /// The address the server listens on.
    pub fn address(&self) -> Result<SocketAddr, ViewerError> {
        self.server
            .server_addr()
            .to_ip()
            .ok_or_else(|| ViewerError::Io("the server has no IP address".into()))
    }

    /// The page's address with the sites file (and the target) to open.
    pub fn url(&self) -> Result<String, ViewerError> {
        let mut url = format!("http://{}/?sites={SITES_NAME}", self.address()?);
        if self.target.is_some() {
            url.push_str(&format!("&target={TARGET_NAME}"));
        }
        Ok(url)
    }

    /// Answers requests until the process ends.
    pub fn serve(self) -> Result<(), ViewerError> {
        for request in self.server.incoming_requests() {
            self.answer(request);
        }
        Ok(())
    }

    fn answer(&self, request: Request) {
        if !matches!(request.method(), Method::Get | Method::Head) {
            let _ = request.respond(Response::from_string("only GET").with_status_code(405));
            return;
        }
        let path = request.url().split(['?', '#']).next().unwrap_or("/");
        let name = path.trim_start_matches('/');
        let name = if name.is_empty() { "index.html" } else { name };
        let body = if let Some(file) = PAGE_FILES.iter().find(|file| file.path == name) {
            Ok((file.text.as_bytes().to_vec(), file.content_type))
        } else if name == MANIFEST {
            Ok((self.manifest.as_bytes().to_vec(), "application/json"))
        } else if let (SITES_NAME, Some(sites)) = (name, &self.sites) {
            read(sites).map(|bytes| (bytes, "text/plain; charset=utf-8"))
        } else if let Some(image) = match name {
            TARGET_NAME => self.target.as_ref(),
            MASK_NAME => self.mask.as_ref(),
            _ => None,
        } {
            read(image).map(|bytes| {
                let kind = if bytes.starts_with(b"\x89PNG") {
                    "image/png"
                } else {
                    "image/jpeg"
                };
                (bytes, kind)
            })
        } else {
            Err((404, format!("no {path} here")))
        };
        let response = match body {
            Ok((bytes, content_type)) => Response::from_data(bytes)
                .with_header(header("Content-Type", content_type))
                .with_header(header("Cache-Control", "no-store")),
            Err((status, message)) => Response::from_data(message.into_bytes())
                .with_status_code(status)
                .with_header(header("Content-Type", "text/plain; charset=utf-8")),
        };
        // A browser that closed the connection early is no error of ours.
        let _ = request.respond(response);
    }
}

fn read(path: &Path) -> Result<Vec<u8>, (u16, String)> {
    std::fs::read(path).map_err(|error| (500, format!("{}: {error}", path.display())))
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid ASCII header")
}
