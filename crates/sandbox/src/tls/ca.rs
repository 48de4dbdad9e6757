//! The local certificate authority: made on first start in the data directory (or the one
//! `--ca-dir` names, so that several instances share it), kept as two PEM files.
//!
//! `apistend-ca-key.pem` (mode 0600) holds the private key and the certificate, and is the
//! authority's only source of truth: it is created atomically (written whole, then linked into
//! place without replacing a file another instance made meanwhile). `apistend-ca.pem` holds the
//! certificate alone, the file clients trust; it is rewritten from the key file whenever it
//! differs. The key is never printed, logged or sent anywhere.

use std::io::Write;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::error::TlsError;

/// The certificate clients trust.
pub const CA_CERT_FILE: &str = "apistend-ca.pem";
/// The authority's key and certificate (mode 0600).
pub const CA_KEY_FILE: &str = "apistend-ca-key.pem";

/// The local certificate authority.
pub struct LocalCa {
    cert_path: PathBuf,
    cert_pem: String,
    cert_der: CertificateDer<'static>,
    issuer: Issuer<'static, KeyPair>,
}

impl std::fmt::Debug for LocalCa {
    // The key stays out of every debug print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalCa")
            .field("cert_path", &self.cert_path)
            .finish_non_exhaustive()
    }
}

impl LocalCa {
    /// The authority in `dir`, made there if it has none.
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// let ca = apistend_sandbox::tls::LocalCa::open(dir.path())?;
    /// assert!(ca.cert_pem().starts_with("-----BEGIN CERTIFICATE-----"));
    /// // A second open finds the same authority.
    /// let again = apistend_sandbox::tls::LocalCa::open(dir.path())?;
    /// assert_eq!(ca.cert_pem(), again.cert_pem());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`TlsError::File`] when the directory cannot be read or written, [`TlsError::Corrupt`]
    /// for a key file that holds no key or certificate.
    pub fn open(dir: &Path) -> Result<Self, TlsError> {
        let file = |name: &str| dir.join(name);
        let io = |path: PathBuf| move |source| TlsError::File { path, source };
        std::fs::create_dir_all(dir).map_err(io(dir.to_owned()))?;
        let key_path = file(CA_KEY_FILE);
        let text = match std::fs::read_to_string(&key_path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => create(dir, &key_path)?,
            Err(e) => return Err(io(key_path)(e)),
        };
        let corrupt = |reason: String| TlsError::Corrupt {
            path: key_path.clone(),
            reason,
        };
        let key = KeyPair::from_pem(&text).map_err(|e| corrupt(format!("no private key: {e}")))?;
        let cert_pem = certificate_block(&text).ok_or_else(|| corrupt("no certificate".into()))?;
        let cert_der = CertificateDer::from_pem_slice(cert_pem.as_bytes())
            .map_err(|e| corrupt(format!("unusable certificate: {e}")))?;
        let issuer = Issuer::from_ca_cert_der(&cert_der, key)
            .map_err(|e| corrupt(format!("unusable certificate: {e}")))?;
        let cert_path = file(CA_CERT_FILE);
        if std::fs::read_to_string(&cert_path).ok().as_deref() != Some(cert_pem.as_str()) {
            write_atomically(dir, &cert_path, &cert_pem, 0o644)?;
        }
        Ok(Self {
            cert_path,
            cert_pem,
            cert_der,
            issuer,
        })
    }

    /// The file of the certificate clients trust.
    pub fn cert_path(&self) -> &Path {
        &self.cert_path
    }

    /// The authority's certificate, PEM.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The authority's certificate, DER.
    pub fn cert_der(&self) -> &CertificateDer<'static> {
        &self.cert_der
    }

    /// A server certificate for `names` (DNS names or IP addresses; the first is its common
    /// name), signed with `key`: valid from a day ago for 397 days (the longest browsers
    /// accept), for server authentication.
    pub(crate) fn issue(
        &self,
        names: &[&str],
        key: &KeyPair,
    ) -> Result<CertificateDer<'static>, TlsError> {
        let mut params = CertificateParams::default();
        params.subject_alt_names = names
            .iter()
            .map(|name| match name.parse::<std::net::IpAddr>() {
                Ok(ip) => Ok(SanType::IpAddress(ip)),
                Err(_) => Ok(SanType::DnsName((*name).try_into()?)),
            })
            .collect::<Result<_, rcgen::Error>>()?;
        let mut dn = DistinguishedName::new();
        dn.push(
            DnType::CommonName,
            names.first().copied().unwrap_or("localhost"),
        );
        params.distinguished_name = dn;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        params.serial_number = Some(random_serial()?.into());
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now - time::Duration::days(1);
        params.not_after = now + time::Duration::days(397);
        Ok(params.signed_by(key, &self.issuer)?.der().clone())
    }
}

/// Makes a new authority and links its key file into place; when another process made one
/// first, returns that one's text.
fn create(dir: &Path, key_path: &Path) -> Result<String, TlsError> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::OrganizationName, "APIStend");
    // The serial in the name tells two machines' authorities apart in a trust store.
    let serial = random_serial()?;
    let tag: String = serial.iter().take(4).map(|b| format!("{b:02x}")).collect();
    dn.push(
        DnType::CommonName,
        format!("APIStend local CA {tag} (sandbox only)"),
    );
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.serial_number = Some(serial.into());
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::days(1);
    params.not_after = now + time::Duration::days(3650);
    let cert = params.self_signed(&key)?;
    let text = format!("{}{}", key.serialize_pem(), cert.pem());
    let io = |source| TlsError::File {
        path: key_path.to_owned(),
        source,
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    set_mode(tmp.as_file(), 0o600).map_err(io)?;
    tmp.write_all(text.as_bytes()).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    match tmp.persist_noclobber(key_path) {
        Ok(_) => Ok(text),
        // Another instance sharing the directory made one first: use it.
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::read_to_string(key_path).map_err(io)
        }
        Err(e) => Err(io(e.error)),
    }
}

fn write_atomically(dir: &Path, path: &Path, text: &str, mode: u32) -> Result<(), TlsError> {
    let io = |source| TlsError::File {
        path: path.to_owned(),
        source,
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    set_mode(tmp.as_file(), mode).map_err(io)?;
    tmp.write_all(text.as_bytes()).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

#[cfg(unix)]
fn set_mode(file: &std::fs::File, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_: &std::fs::File, _: u32) -> std::io::Result<()> {
    Ok(())
}

/// The first `CERTIFICATE` block of a PEM text, with its final line break.
fn certificate_block(text: &str) -> Option<String> {
    const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
    const END: &str = "-----END CERTIFICATE-----";
    let start = text.find(BEGIN)?;
    let end = start + text.get(start..)?.find(END)? + END.len();
    Some(format!("{}\n", text.get(start..end)?))
}

/// 16 random bytes, the first below 0x80 (a positive serial).
fn random_serial() -> Result<Vec<u8>, TlsError> {
    let mut serial = [0u8; 16];
    getrandom::fill(&mut serial).map_err(|e| TlsError::Random(e.to_string()))?;
    if let Some(first) = serial.first_mut() {
        *first &= 0x7f;
    }
    Ok(serial.to_vec())
}
