//! HTTPS without a proxy: turns a PEM certificate chain and private key into the rustls configuration the
//! listener serves with. It knows files and rustls only; which files, and how a failure is reported to
//! the operator, belong to `configuration`, and binding the listener to `startup`.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::sign::{CertifiedKey, SingleCertAndKey};
use rustls::ServerConfig;
use rustls_pki_types::pem::{self, PemObject};
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// Why a certificate and key cannot be served, each naming the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The certificate file is missing, unreadable or holds no usable certificate.
    #[error("{0}")]
    Certificate(String),
    /// The key file is missing, unreadable, holds no usable key, or a key of another certificate.
    #[error("{0}")]
    PrivateKey(String),
}

/// The largest certificate or key file read: a chain of a few certificates and a key are a few kilobytes,
/// and a path mistaken for one (a log, a device) must not be read whole into memory at start-up.
pub const MAX_PEM_BYTES: u64 = 1024 * 1024;

/// The mode of `key_file` when its group or others may read it: the start warns, since whoever reads the
/// key can impersonate the server.
pub fn key_file_readable_by_others(key_file: &Path) -> Option<u32> {
    let mode = std::fs::metadata(key_file).ok()?.permissions().mode() & 0o777;
    (mode & 0o044 != 0).then_some(mode)
}

/// The TLS 1.3 and 1.2 server configuration for `cert_file` (the chain, leaf first) and `key_file`.
///
/// Everything is checked here, at start-up, rather than at the first handshake: a key that does not belong
/// to the certificate would otherwise fail every client while the server looks healthy.
pub fn server_config(cert_file: &Path, key_file: &Path) -> Result<ServerConfig, TlsError> {
    let certificate_chain = read_certificate_chain(cert_file)?;
    let private_key = read_private_key(key_file)?;
    // Named rather than taken from the process default: reqwest enables the same provider, and a second
    // one enabled later by some dependency would make the default ambiguous (rustls then panics).
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certified_key = certified_key(
        certificate_chain,
        private_key,
        &provider,
        cert_file,
        key_file,
    )?;
    let config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .expect("the ring provider supports TLS 1.2 and 1.3")
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(SingleCertAndKey::from(certified_key)));
    Ok(config)
}

fn read_certificate_chain(cert_file: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let problem = |what: String| TlsError::Certificate(format!("{}: {what}", cert_file.display()));
    let pem = read_bounded(cert_file).map_err(problem)?;
    let certificate_chain = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| problem(not_valid_pem(e)))?;
    if certificate_chain.is_empty() {
        return Err(problem(
            "holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into(),
        ));
    }
    Ok(certificate_chain)
}

fn read_private_key(key_file: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let problem = |what: String| TlsError::PrivateKey(format!("{}: {what}", key_file.display()));
    let pem = read_bounded(key_file).map_err(problem)?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| match e {
        pem::Error::NoItemsFound => problem(
            "holds no PEM private key (PKCS#8 \"PRIVATE KEY\", PKCS#1 \"RSA PRIVATE KEY\" or SEC1 \
             \"EC PRIVATE KEY\")"
                .into(),
        ),
        e => problem(not_valid_pem(e)),
    })
}

/// The file's bytes, refused past [`MAX_PEM_BYTES`] without reading further.
pub(crate) fn read_bounded(path: &Path) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read the file: {e}"))?;
    let mut pem = Vec::new();
    file.take(MAX_PEM_BYTES + 1)
        .read_to_end(&mut pem)
        .map_err(|e| format!("cannot read the file: {e}"))?;
    if pem.len() as u64 > MAX_PEM_BYTES {
        return Err(
            "is larger than 1 MiB, which no PEM certificate chain or key is (they are a few kilobytes)"
                .into(),
        );
    }
    Ok(pem)
}

/// Said in words: the library's own messages print the offending line as a list of bytes.
fn not_valid_pem(error: pem::Error) -> String {
    let why = match error {
        pem::Error::MissingSectionEnd { .. } => "a section has no -----END line".to_owned(),
        pem::Error::IllegalSectionStart { .. } => "a -----BEGIN line is malformed".to_owned(),
        pem::Error::Base64Decode(_) => "a section's body is not base64".to_owned(),
        e => e.to_string(),
    };
    format!("is not valid PEM: {why}")
}

/// The key loaded for signing and checked against the leaf certificate.
fn certified_key(
    certificate_chain: Vec<CertificateDer<'static>>,
    private_key: PrivateKeyDer<'static>,
    provider: &CryptoProvider,
    cert_file: &Path,
    key_file: &Path,
) -> Result<CertifiedKey, TlsError> {
    let signing_key = provider
        .key_provider
        .load_private_key(private_key)
        .map_err(|e| {
            TlsError::PrivateKey(format!(
                "{}: not a usable private key: {e}",
                key_file.display()
            ))
        })?;
    let certified_key = CertifiedKey::new(certificate_chain, signing_key);
    match certified_key.keys_match() {
        // Some key types cannot tell their public key; the handshake still fails if they do not match.
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {
            Ok(certified_key)
        }
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => {
            Err(TlsError::PrivateKey(format!(
                "{}: not the key of the certificate in {}",
                key_file.display(),
                cert_file.display()
            )))
        }
        Err(e) => Err(TlsError::Certificate(format!(
            "{}: the first certificate is not usable: {e}",
            cert_file.display()
        ))),
    }
}
