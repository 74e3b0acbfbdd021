//! `[server.tls]` validated: both files named, read and checked before anything is served (an undeclared
//! `public_url` is then derived as https, in `public_url`). Reading PEM and building the rustls
//! configuration is `crate::tls`'s; this module only says which key a failure belongs to.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use super::raw::RawTls;
use super::specs::SpecError;
use crate::tls::TlsError;

/// `[server.tls]`: the listener speaks HTTPS only.
#[derive(Clone)]
pub struct TlsSettings {
    /// `cert_file`: the PEM certificate chain, leaf first.
    pub cert_file: PathBuf,
    /// `key_file`: the PEM private key.
    pub key_file: PathBuf,
    /// Built from both files at load, so a bad file stops start-up instead of failing every handshake.
    pub server_config: Arc<rustls::ServerConfig>,
}

/// The paths only: the configuration holds the private key.
impl fmt::Debug for TlsSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsSettings")
            .field("cert_file", &self.cert_file)
            .field("key_file", &self.key_file)
            .finish_non_exhaustive()
    }
}

pub(super) fn validate_tls(raw: Option<&RawTls>) -> Result<Option<TlsSettings>, SpecError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let cert_file = required_path("server.tls.cert_file", raw.cert_file.as_deref())?;
    let key_file = required_path("server.tls.key_file", raw.key_file.as_deref())?;
    let server_config = crate::tls::server_config(&cert_file, &key_file).map_err(|e| match e {
        TlsError::Certificate(problem) => SpecError::new("server.tls.cert_file", problem),
        TlsError::PrivateKey(problem) => SpecError::new("server.tls.key_file", problem),
    })?;
    Ok(Some(TlsSettings {
        cert_file,
        key_file,
        server_config: Arc::new(server_config),
    }))
}

fn required_path(key: &str, value: Option<&str>) -> Result<PathBuf, SpecError> {
    match value {
        None => Err(SpecError::new(
            key,
            "is required when [server.tls] is present",
        )),
        Some(path) if path.trim().is_empty() => Err(SpecError::new(key, "must not be empty")),
        Some(path) => Ok(PathBuf::from(path)),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{from_toml_str, ConfigError, Overrides, Settings};

    /// A self-signed certificate for 127.0.0.1 and its key, written as `cert.pem` and `key.pem`.
    fn write_certificate(dir: &Path) -> (String, String) {
        let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
        let cert_file = dir.join("cert.pem");
        let key_file = dir.join("key.pem");
        std::fs::write(&cert_file, certified.cert.pem()).unwrap();
        std::fs::write(&key_file, certified.signing_key.serialize_pem()).unwrap();
        (
            cert_file.display().to_string(),
            key_file.display().to_string(),
        )
    }

    fn load(text: &str) -> Result<Settings, ConfigError> {
        from_toml_str(text, "test.toml", &Overrides::default())
    }

    fn tls_table(cert_file: &str, key_file: &str) -> String {
        format!("[server.tls]\ncert_file = {cert_file:?}\nkey_file = {key_file:?}\n")
    }

    #[test]
    fn without_the_table_the_server_speaks_plain_http() {
        let settings = load("[server]\nbind = \"127.0.0.1:9999\"").unwrap();
        assert!(settings.server.tls.is_none());
        assert_eq!(settings.server.public_url.scheme(), "http");
    }

    #[test]
    fn a_certificate_and_its_key_turn_tls_on_and_an_undeclared_public_url_to_https() {
        let dir = tempfile::tempdir().unwrap();
        let (cert_file, key_file) = write_certificate(dir.path());

        let settings = load(&tls_table(&cert_file, &key_file)).unwrap();

        let tls = settings.server.tls.expect("TLS is on");
        assert_eq!(tls.cert_file.display().to_string(), cert_file);
        assert_eq!(
            settings.server.public_url.as_str(),
            "https://127.0.0.1:8080/"
        );
        assert!(
            !format!("{tls:?}").contains("PRIVATE"),
            "the key stays out of Debug: {tls:?}"
        );
    }

    #[test]
    fn an_operators_own_public_url_is_kept_as_written_with_tls_on() {
        let dir = tempfile::tempdir().unwrap();
        let (cert_file, key_file) = write_certificate(dir.path());
        for public_url in ["http://127.0.0.1:8080", "https://switchboard.example.com"] {
            let text = format!(
                "[server]\npublic_url = {public_url:?}\n{}",
                tls_table(&cert_file, &key_file)
            );
            let settings = load(&text).unwrap();
            assert_eq!(
                settings.server.public_url.as_str().trim_end_matches('/'),
                public_url
            );
        }
    }

    #[test]
    fn a_missing_unreadable_or_invalid_file_names_the_key_and_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let (cert_file, key_file) = write_certificate(dir.path());
        let other_dir = tempfile::tempdir().unwrap();
        let (_, other_key_file) = write_certificate(other_dir.path());
        let garbage = dir.path().join("garbage.pem");
        std::fs::write(&garbage, "not a certificate\n").unwrap();
        let garbage = garbage.display().to_string();
        let missing = dir.path().join("missing.pem").display().to_string();
        let cases = [
            (
                "[server.tls]\nkey_file = \"k.pem\"\n".to_owned(),
                "server.tls.cert_file",
                "is required",
            ),
            (
                "[server.tls]\ncert_file = \"c.pem\"\n".to_owned(),
                "server.tls.key_file",
                "is required",
            ),
            (tls_table("", &key_file), "server.tls.cert_file", "empty"),
            (
                tls_table(&missing, &key_file),
                "server.tls.cert_file",
                &missing,
            ),
            (
                tls_table(&garbage, &key_file),
                "server.tls.cert_file",
                &garbage,
            ),
            (
                tls_table(&key_file, &key_file),
                "server.tls.cert_file",
                &key_file,
            ),
            (
                tls_table(&cert_file, &missing),
                "server.tls.key_file",
                &missing,
            ),
            (
                tls_table(&cert_file, &garbage),
                "server.tls.key_file",
                &garbage,
            ),
            (
                tls_table(&cert_file, &cert_file),
                "server.tls.key_file",
                &cert_file,
            ),
            (
                tls_table(&cert_file, &other_key_file),
                "server.tls.key_file",
                "not the key of the certificate",
            ),
            (
                format!("{}crt_file = \"x\"\n", tls_table(&cert_file, &key_file)),
                "server.tls.crt_file",
                "unknown field",
            ),
        ];
        for (text, key, mentioned) in cases {
            let error = load(&text).unwrap_err();
            assert_eq!(error.key.as_deref(), Some(key), "{text}: {error}");
            assert!(error.to_string().contains(mentioned), "{text}: {error}");
        }
    }
}
