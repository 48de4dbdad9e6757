//! `apistend ca`: where the local certificate authority is and how to trust it.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use apistend_sandbox::tls::LocalCa;
use clap::Args;

use crate::data_dir::DataArg;

#[derive(Debug, Args)]
pub(crate) struct CaArgs {
    /// The data directory of `apistend serve` (the authority lives there unless --ca-dir says
    /// otherwise); the same default as `serve`'s.
    #[command(flatten)]
    data: DataArg,
    /// The authority's own directory, as given to `apistend serve --ca-dir`.
    #[arg(long, env = "APISTEND_CA_DIR")]
    ca_dir: Option<PathBuf>,
    /// The sandbox's address, as given to `apistend serve --addr`: the proxy it prints.
    #[arg(long, env = "APISTEND_ADDR", default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
}

pub(crate) fn run(args: &CaArgs) -> anyhow::Result<()> {
    let dir = match &args.ca_dir {
        Some(dir) => dir.clone(),
        None => {
            let (dir, moved) = args.data.resolve()?;
            if let Some(warning) = moved {
                eprintln!("warning: {warning}");
            }
            dir
        }
    };
    // Made now if it does not exist yet, so that clients can trust it before the first start.
    let ca = LocalCa::open(&dir)?;
    let path = std::fs::canonicalize(ca.cert_path())?;
    // A reader that stops early (`apistend ca | head -1`) is no error.
    match print(&path.display().to_string(), args.addr) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// The certificate's path, then how to trust it and reach the sandbox at `addr`.
fn print(path: &str, addr: SocketAddr) -> std::io::Result<()> {
    let proxy = match addr.ip() {
        ip if ip.is_unspecified() => format!("127.0.0.1:{}", addr.port()),
        _ => addr.to_string(),
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{path}")?;
    writeln!(
        out,
        "
# Trust it for one program (it replaces the system's roots for the first three):
export SSL_CERT_FILE={path}          # OpenSSL-based tools, Python's ssl, httpx, Go, Rust (rustls-native-certs)
export REQUESTS_CA_BUNDLE={path}     # Python requests
export CURL_CA_BUNDLE={path}         # curl (or: curl --cacert {path})
export NODE_EXTRA_CA_CERTS={path}    # Node.js (added to its roots)

# Or trust it system-wide (Debian/Ubuntu; remove it the same way when done):
sudo cp {path} /usr/local/share/ca-certificates/apistend-ca.crt && sudo update-ca-certificates

# Then let clients with fixed hosts reach the sandbox through it as a proxy:
export HTTPS_PROXY=http://{proxy} HTTP_PROXY=http://{proxy}"
    )?;
    out.flush()
}
