//! TLS for `echod serve` beyond loopback: the person's own certificate and key (PEM files),
//! or a local certificate authority kept in `<data dir>/tls/` (made on first use) that signs
//! a fresh server certificate for this run's names. A device trusts the CA once, after
//! checking the SHA-256 fingerprint `echod serve` prints against the one it is shown.

use anyhow::Context;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;

/// The local CA's folder in the data directory, and its two files.
const TLS_DIR: &str = "tls";
const CA_CERT: &str = "ca.pem";
const CA_KEY: &str = "ca-key.pem";

/// Where the server's certificate comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum TlsSource {
    /// The person's certificate chain and private key, PEM.
    Files { cert: PathBuf, key: PathBuf },
    /// The local CA of the data directory signs a certificate for the server's names.
    LocalCa,
}

/// TLS ready to accept connections.
pub struct Tls {
    pub acceptor: TlsAcceptor,
    /// The local CA that signed the certificate, when one did.
    pub local_ca: Option<LocalCa>,
}

/// The local CA as a device needs to know it.
pub struct LocalCa {
    /// Its certificate (PEM), to install on a device.
    pub cert: PathBuf,
    /// SHA-256 of its certificate, as `AB:CD:…`.
    pub fingerprint: String,
}

/// Sets up TLS from `source`; `names` (host names and addresses) are what a local CA's
/// certificate covers.
pub fn setup(source: &TlsSource, home: &Path, names: &[String]) -> anyhow::Result<Tls> {
    let (chain, key, local_ca) = match source {
        TlsSource::Files { cert, key } => {
            let chain = CertificateDer::pem_file_iter(cert)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .with_context(|| format!("cannot read the certificates in {}", cert.display()))?;
            anyhow::ensure!(!chain.is_empty(), "{} holds no certificate", cert.display());
            let key = PrivateKeyDer::from_pem_file(key)
                .with_context(|| format!("cannot read the private key in {}", key.display()))?;
            (chain, key, None)
        }
        TlsSource::LocalCa => local_ca_certificate(home, names)?,
    };
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS versions")?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .context("the certificate and the private key do not go together")?;
    Ok(Tls {
        acceptor: TlsAcceptor::from(Arc::new(config)),
        local_ca,
    })
}

type Issued = (
    Vec<CertificateDer<'static>>,
    PrivateKeyDer<'static>,
    Option<LocalCa>,
);

/// A server certificate for `names` signed by the data directory's CA (made if missing).
fn local_ca_certificate(home: &Path, names: &[String]) -> anyhow::Result<Issued> {
    let dir = home.join(TLS_DIR);
    let (cert_path, key_path) = (dir.join(CA_CERT), dir.join(CA_KEY));
    let ca_key = if key_path.exists() {
        let pem = std::fs::read_to_string(&key_path)
            .with_context(|| format!("cannot read {}", key_path.display()))?;
        KeyPair::from_pem(&pem).with_context(|| format!("{} is no key", key_path.display()))?
    } else {
        make_ca(&dir, &cert_path, &key_path)?
    };
    let ca_der = CertificateDer::from_pem_file(&cert_path)
        .with_context(|| format!("cannot read {}", cert_path.display()))?;
    let issuer = Issuer::new(ca_params(&ca_key), &ca_key);

    let mut leaf = CertificateParams::new(names.to_vec())
        .with_context(|| format!("a certificate cannot name {names:?}"))?;
    leaf.distinguished_name = DistinguishedName::new();
    leaf.distinguished_name
        .push(DnType::CommonName, "Echo Desk server");
    leaf.use_authority_key_identifier_extension = true;
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    leaf.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    let now = time::OffsetDateTime::now_utc();
    leaf.not_before = now - time::Duration::days(1);
    // Browsers refuse server certificates valid for longer than 398 days.
    leaf.not_after = now + time::Duration::days(397);
    let leaf_key = KeyPair::generate().context("making the server's key")?;
    let cert = leaf
        .signed_by(&leaf_key, &issuer)
        .context("signing the server's certificate")?;
    let key = PrivateKeyDer::try_from(leaf_key.serialize_der())
        .map_err(|e| anyhow::anyhow!("the server's key: {e}"))?;
    let local_ca = LocalCa {
        cert: cert_path,
        fingerprint: fingerprint(&ca_der),
    };
    Ok((vec![cert.der().clone(), ca_der], key, Some(local_ca)))
}

/// The CA's parameters, the same each time for the same key (its name carries a digest of
/// the key, so two installations' CAs never share a name).
fn ca_params(key: &KeyPair) -> CertificateParams {
    let mut params = CertificateParams::default();
    let digest = ring::digest::digest(&ring::digest::SHA256, key.public_key_raw());
    let short: String = digest.as_ref()[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, format!("Echo Desk local CA {short}"));
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params
}

/// Makes the CA: its key (readable by the user only) and its self-signed certificate.
fn make_ca(dir: &Path, cert_path: &Path, key_path: &Path) -> anyhow::Result<KeyPair> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let key = KeyPair::generate().context("making the CA's key")?;
    let mut params = ca_params(&key);
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::days(1);
    params.not_after = now + time::Duration::days(3650);
    let cert = params
        .self_signed(&key)
        .context("signing the CA's certificate")?;
    let write = |path: &Path, mode: u32, text: &str| -> anyhow::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        file.write_all(text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))
    };
    write(key_path, 0o600, &key.serialize_pem())?;
    write(cert_path, 0o644, &cert.pem())?;
    Ok(key)
}

/// SHA-256 of a certificate as upper-case hex pairs joined by `:`.
pub fn fingerprint(der: &CertificateDer<'_>) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, der.as_ref());
    digest
        .as_ref()
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}
