//! `sad view`'s web server: the pages, the kernels' manifest, a sites file or not, an optional
//! target image (the photo to train on, for the trainer page) and its mask, on one address
//! (loopback unless asked otherwise), nothing else.
//!
//! One request per connection, answered on a thread of its own, with `Connection: close`: all a
//! local page needs. (tiny_http 0.12's keep-alive connections left one of Chromium's parallel
//! module loads pending for good in 3 to 4 of 20 fresh-browser loads of the trainer page here;
//! a server that closes each connection had none in 40.)
//!
//! A request is answered only when its `Host` names this server by address (or `localhost` on
//! a loopback or any-address bind) and port: a web page whose own name was rebound to this
//! machine's address (DNS rebinding) sends its name, and gets 403.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use burn_sad_viewer::{MANIFEST, PAGE_FILES, ViewerError, manifest_json};

/// The name the sites file is served by.
pub const SITES_NAME: &str = "sites.txt";
/// The name the target image is served by.
pub const TARGET_NAME: &str = "target";
/// The name the trainer page's mask is served by.
pub const MASK_NAME: &str = "mask";

/// The longest request head read (request line and headers).
const MAX_HEAD: u64 = 16 * 1024;

/// A bound viewer server (see [`ViewerServer::serve`]).
pub struct ViewerServer {
    listener: TcpListener,
    manifest: String,
    sites: Option<PathBuf>,
    target: Option<PathBuf>,
    mask: Option<PathBuf>,
}

/// A reply: status, content type and body.
type Reply = (u16, &'static str, Vec<u8>);

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
        let listener = TcpListener::bind(address)
            .map_err(|error| ViewerError::Io(format!("binding {address}: {error}")))?;
        Ok(Self {
            listener,
            manifest,
            sites: sites.map(Path::to_path_buf),
            target: target.map(Path::to_path_buf),
            mask: mask.map(Path::to_path_buf),
        })
    }

    /// The address the server listens on.
    pub fn address(&self) -> Result<SocketAddr, ViewerError> {
        self.listener
            .local_addr()
            .map_err(|error| ViewerError::Io(format!("the server has no address: {error}")))
    }

    /// The page's address with the sites file (and the target) to open.
    pub fn url(&self) -> Result<String, ViewerError> {
        let mut url = format!("http://{}/?sites={SITES_NAME}", self.address()?);
        if self.target.is_some() {
            url.push_str(&format!("&target={TARGET_NAME}"));
        }
        Ok(url)
    }

    /// Answers requests until the process ends, each connection on a thread of its own.
    pub fn serve(self) -> Result<(), ViewerError> {
        let server = Arc::new(self);
        for stream in server.listener.incoming() {
            // A connection that failed before it was accepted is the client's affair.
            let Ok(stream) = stream else { continue };
            let server = server.clone();
            std::thread::spawn(move || server.connection(stream));
        }
        Ok(())
    }

    /// Reads one request from `stream`, answers it and closes the connection. A client that
    /// went away is no error of ours.
    fn connection(&self, stream: TcpStream) {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let Ok(mut writer) = stream.try_clone() else {
            return;
        };
        let mut reader = BufReader::new(stream).take(MAX_HEAD);
        let mut line = String::new();
        let request_line = match reader.read_line(&mut line) {
            Ok(_) => line.trim_end().to_string(),
            Err(_) => return,
        };
        // The headers, up to the blank line; only `Host` changes the reply.
        let mut complete = false;
        let mut host = None;
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) if line.trim_end().is_empty() => {
                    complete = true;
                    break;
                }
                Ok(_) => {
                    if let Some((name, value)) = line.split_once(':')
                        && name.trim().eq_ignore_ascii_case("host")
                    {
                        host = Some(value.trim().to_string());
                    }
                }
            }
        }
        let bound = self.listener.local_addr().ok();
        let mut parts = request_line.split(' ');
        let (method, target) = (parts.next().unwrap_or(""), parts.next());
        let (status, content_type, body) = match target {
            Some(target) if complete && parts.next().is_some_and(|v| v.starts_with("HTTP/")) => {
                if !bound.is_some_and(|bound| host_names(host.as_deref(), bound)) {
                    (
                        403,
                        TEXT,
                        b"only requests to this server's own address".to_vec(),
                    )
                } else {
                    match method {
                        "GET" | "HEAD" => self.answer(target),
                        _ => (405, TEXT, b"only GET".to_vec()),
                    }
                }
            }
            _ => (400, TEXT, b"a malformed request".to_vec()),
        };
        let head = format!(
            "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
             Cache-Control: no-store\r\nConnection: close\r\n\r\n",
            reason(status),
            body.len()
        );
        let _ = writer.write_all(head.as_bytes());
        if method != "HEAD" {
            let _ = writer.write_all(&body);
        }
        let _ = writer.flush();
        let _ = writer.shutdown(std::net::Shutdown::Both);
    }

    /// The reply to a GET of `target` (a path with an optional query).
    fn answer(&self, target: &str) -> Reply {
        let path = target.split(['?', '#']).next().unwrap_or("/");
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
        match body {
            Ok((bytes, content_type)) => (200, content_type, bytes),
            Err((status, message)) => (status, TEXT, message.into_bytes()),
        }
    }
}

const TEXT: &str = "text/plain; charset=utf-8";

/// Whether a request's `Host` header names a server bound to `bound`: its port, and as the name
/// the bound address (any address literal when bound to all of them), or `localhost` when the
/// bind is loopback or all addresses. A domain name is never one: it is what DNS rebinding
/// points at someone else's server.
fn host_names(host: Option<&str>, bound: SocketAddr) -> bool {
    let Some(host) = host else { return false };
    let Some((name, port)) = host.rsplit_once(':') else {
        return false;
    };
    if port.parse::<u16>() != Ok(bound.port()) {
        return false;
    }
    let ip = bound.ip();
    if name.eq_ignore_ascii_case("localhost") {
        return ip.is_loopback() || ip.is_unspecified();
    }
    let literal = name
        .strip_prefix('[')
        .and_then(|name| name.strip_suffix(']'))
        .unwrap_or(name);
    match literal.parse::<IpAddr>() {
        Ok(named) => named == ip || ip.is_unspecified(),
        Err(_) => false,
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Internal Server Error",
    }
}

fn read(path: &Path) -> Result<Vec<u8>, (u16, String)> {
    std::fs::read(path).map_err(|error| (500, format!("{}: {error}", path.display())))
}
