//! `[telemetry]`: where OpenTelemetry traces go, and which authority vouches for the collector's certificate.

use std::path::{Path, PathBuf};

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::CertificateDer;
use url::Url;

use super::raw::RawTelemetry;
use super::specs::SpecError;

/// The path OTLP/HTTP posts spans to, under a collector's base URL.
const TRACES_PATH: &str = "/v1/traces";

/// `[telemetry]`, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct TelemetrySettings {
    /// Where spans are posted: the endpoint as given when it already ends in `/v1/traces`, else the
    /// endpoint with `/v1/traces` appended (a collector's base URL). `None`: nothing is traced.
    pub traces_url: Option<Url>,
    /// A PEM file of certificate authorities trusted for an `https` endpoint besides the public roots (a
    /// collector behind a private CA). Checked when the configuration is read.
    pub ca_file: Option<PathBuf>,
    /// `service.name` of the exported spans.
    pub service_name: String,
}

/// The standard OpenTelemetry variables that win over `[telemetry]` keys.
#[derive(Debug, Default)]
pub(crate) struct TelemetryEnv {
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`, over `otlp_endpoint`.
    pub endpoint: Option<String>,
    /// `OTEL_EXPORTER_OTLP_CERTIFICATE`, over `ca_file`.
    pub certificate: Option<String>,
}

impl TelemetryEnv {
    pub(crate) fn read() -> TelemetryEnv {
        let var = |name| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        TelemetryEnv {
            endpoint: var("OTEL_EXPORTER_OTLP_ENDPOINT"),
            certificate: var("OTEL_EXPORTER_OTLP_CERTIFICATE"),
        }
    }
}

impl TelemetrySettings {
    pub(super) fn validate(
        raw: RawTelemetry,
        env: &TelemetryEnv,
    ) -> Result<TelemetrySettings, SpecError> {
        let (key, endpoint) = match &env.endpoint {
            Some(endpoint) => ("OTEL_EXPORTER_OTLP_ENDPOINT", Some(endpoint.clone())),
            None => ("telemetry.otlp_endpoint", raw.otlp_endpoint),
        };
        let traces_url = match endpoint {
            None => None,
            Some(text) => Some(traces_url(&text).map_err(|e| SpecError::new(key, e))?),
        };
        let (key, ca_file) = match &env.certificate {
            Some(path) => ("OTEL_EXPORTER_OTLP_CERTIFICATE", Some(path.clone())),
            None => ("telemetry.ca_file", raw.ca_file),
        };
        let ca_file = ca_file.map(PathBuf::from);
        if let Some(path) = &ca_file {
            // Read now, as the server's TLS files are: a file that cannot be used is a configuration
            // error naming its key, not an exporter that fails every batch later.
            read_ca_file(path).map_err(|e| SpecError::new(key, e))?;
        }
        let service_name = raw.service_name.unwrap_or_else(|| "switchboard".to_owned());
        if service_name.trim().is_empty() {
            return Err(SpecError::new(
                "telemetry.service_name",
                "must not be blank",
            ));
        }
        Ok(TelemetrySettings {
            traces_url,
            ca_file,
            service_name,
        })
    }

    /// [`TelemetrySettings::traces_url`] as the log may show it: no user, password, query or fragment,
    /// which is where credentials of a collector's URL would be.
    pub fn shown_traces_url(&self) -> Option<String> {
        let mut url = self.traces_url.clone()?;
        // Only URLs that cannot be a base refuse these, and an http(s) URL always can.
        let _ = url.set_username("");
        let _ = url.set_password(None);
        url.set_query(None);
        url.set_fragment(None);
        Some(url.into())
    }
}

/// Where an endpoint's spans go: OTLP/HTTP's `{base}/v1/traces`, or the endpoint itself when it already
/// names that path (the full URL many vendors print), so the path is never doubled.
fn traces_url(text: &str) -> Result<Url, String> {
    let mut url = Url::parse(text.trim()).map_err(|e| format!("is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err("must be an http or https URL with a host".to_owned());
    }
    let base = url.path().trim_end_matches('/');
    let path = if base.ends_with(TRACES_PATH) {
        base.to_owned()
    } else {
        format!("{base}{TRACES_PATH}")
    };
    url.set_path(&path);
    url.set_fragment(None);
    Ok(url)
}

/// The certificates of a PEM file of certificate authorities; at least one.
pub fn read_ca_file(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let certificates = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{shown} is not a PEM certificate file: {e}"))?;
    if certificates.is_empty() {
        return Err(format!("{shown} holds no PEM certificate"));
    }
    Ok(certificates)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(text: &str) -> Result<String, String> {
        traces_url(text).map(String::from)
    }

    #[test]
    fn a_base_url_gets_the_traces_path_and_a_traces_url_is_kept_as_it_is() {
        for (given, posted) in [
            ("http://c:4318", "http://c:4318/v1/traces"),
            ("http://c:4318/", "http://c:4318/v1/traces"),
            ("https://c.example/otlp", "https://c.example/otlp/v1/traces"),
            ("https://c.example/v1/traces", "https://c.example/v1/traces"),
            (
                "https://c.example/v1/traces/",
                "https://c.example/v1/traces",
            ),
            (
                "https://c.example/otlp/v1/traces",
                "https://c.example/otlp/v1/traces",
            ),
            (
                " http://c:4318?tenant=a ",
                "http://c:4318/v1/traces?tenant=a",
            ),
            ("http://c:4318/v1/traces#x", "http://c:4318/v1/traces"),
        ] {
            assert_eq!(endpoint(given).as_deref(), Ok(posted), "{given}");
        }
        for refused in ["grpc://c:4317", "c:4318", "not a url", "file:///tmp/x"] {
            assert!(endpoint(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn the_log_shows_the_endpoint_without_credentials_or_query() {
        let raw = RawTelemetry {
            otlp_endpoint: Some("https://user:secret@c.example/v1/traces?key=abc".into()),
            ..RawTelemetry::default()
        };
        let settings = TelemetrySettings::validate(raw, &TelemetryEnv::default()).unwrap();
        assert_eq!(
            settings.shown_traces_url().as_deref(),
            Some("https://c.example/v1/traces")
        );
        assert_eq!(
            settings.traces_url.unwrap().as_str(),
            "https://user:secret@c.example/v1/traces?key=abc",
            "the exporter posts to the URL as given"
        );
    }

    #[test]
    fn a_ca_file_that_cannot_be_used_is_a_configuration_error_naming_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        for path in [&missing, &empty] {
            let raw = RawTelemetry {
                otlp_endpoint: Some("https://c.example".into()),
                ca_file: Some(path.display().to_string()),
                service_name: None,
            };
            let error = TelemetrySettings::validate(raw, &TelemetryEnv::default())
                .unwrap_err()
                .to_string();
            assert!(error.contains("telemetry.ca_file"), "{error}");
        }
        let raw = RawTelemetry::default();
        let env = TelemetryEnv {
            endpoint: Some("https://c.example".into()),
            certificate: Some(missing.display().to_string()),
        };
        let error = TelemetrySettings::validate(raw, &env)
            .unwrap_err()
            .to_string();
        assert!(error.contains("OTEL_EXPORTER_OTLP_CERTIFICATE"), "{error}");
    }
}
