//! `apistend ca`: where the local certificate authority is and how to trust it.

use std::io::Write;
use std::path::PathBuf;

use apistend_sandbox::tls::LocalCa;
use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct CaArgs {
    /// The data directory of `apistend serve` (the authority lives there unless --ca-dir says
    /// otherwise).
    #[arg(long, env = "APISTEND_DATA", default_value = ".")]
    data: PathBuf,
    /// The authority's own directory, as given to `apistend serve --ca-dir`.
    #[arg(long, env = "APISTEND_CA_DIR")]
    ca_dir: Option<PathBuf>,
}

pub(crate) fn run(args: &CaArgs) -> anyhow::Result<()> {
    let dir = args.ca_dir.as_ref().unwrap_or(&args.data);
    // Made now if it does not exist yet, so that clients can trust it before the first start.
    let ca = LocalCa::open(dir)?;
    let path = std::fs::canonicalize(ca.cert_path())?;
    let path = path.display();
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
export HTTPS_PROXY=http://127.0.0.1:8080 HTTP_PROXY=http://127.0.0.1:8080"
    )?;
    Ok(())
}
