//! HTTPS without a proxy (`[server.tls]`): the built binary serves TLS 1.2 and 1.3 with a certificate made
//! for the test, refuses plain HTTP on the same port, and will not start with a bad certificate or key.
//! Its answers carry `Strict-Transport-Security`, a certificate or key file over 1 MiB stops the start, and
//! a key file others can read is warned about (issue 43).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::json;

use crate::helpers::{
    binary, client, status_and_json, write_config, Api, BinaryServer, TestConfig, POOL_IDLE_TIMEOUT,
};

/// A self-signed certificate for 127.0.0.1, written as PEM files.
pub(crate) struct TestCertificate {
    pub(crate) cert_file: PathBuf,
    pub(crate) key_file: PathBuf,
    cert_pem: String,
}

impl TestCertificate {
    pub(crate) fn write(dir: &Path) -> TestCertificate {
        let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
        let cert_pem = certified.cert.pem();
        let cert_file = dir.join("cert.pem");
        let key_file = dir.join("key.pem");
        std::fs::write(&cert_file, &cert_pem).unwrap();
        std::fs::write(&key_file, certified.signing_key.serialize_pem()).unwrap();
        TestCertificate {
            cert_file,
            key_file,
            cert_pem,
        }
    }

    /// A client that trusts this certificate alone, limited to one TLS version; otherwise as the shared
    /// test client.
    pub(crate) fn client(&self, tls_version: reqwest::tls::Version) -> reqwest::Client {
        reqwest::Client::builder()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(self.cert_pem.as_bytes()).unwrap())
            .min_tls_version(tls_version)
            .max_tls_version(tls_version)
            .timeout(Duration::from_secs(10))
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .build()
            .unwrap()
    }
}

/// The test configuration with `[server.tls]` set to `cert_file` and `key_file`, and the inherited
/// `public_url`.
pub(crate) fn config_with_tls(cert_file: &Path, key_file: &Path) -> TestConfig {
    let mut config = TestConfig::default();
    config
        .remove("server.public_url")
        .set("server.tls.cert_file", cert_file.display().to_string())
        .set("server.tls.key_file", key_file.display().to_string());
    config
}

/// Runs `serve --config config` to its exit (a server that starts instead fails the test after 10 s).
fn run_to_exit(config: &Path, data_dir: &Path) -> Output {
    let mut command = Command::new(binary());
    command
        .args(["serve", "--config"])
        .arg(config)
        .env("SWITCHBOARD_BIND", "127.0.0.1:0")
        .env("SWITCHBOARD_DATA_DIR", data_dir)
        .env("RUST_LOG", "warn");
    crate::helpers::run_to_exit(command)
}

#[actix_web::test]
async fn with_server_tls_the_binary_serves_https_over_tls_1_2_and_1_3_and_prints_an_https_url() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let certificate = TestCertificate::write(dir.path());
    let config = write_config(
        dir.path(),
        &config_with_tls(&certificate.cert_file, &certificate.key_file),
    );

    let server = BinaryServer::start(&config, data_dir.path());

    assert!(
        server.address.starts_with("https://127.0.0.1:"),
        "the first line names an https URL: {}",
        server.address
    );
    let tls_1_3 = certificate.client(reqwest::tls::Version::TLS_1_3);
    Api::with_client(server.address.clone(), tls_1_3.clone())
        .wait_ready()
        .await;
    for (version, client) in [
        ("TLS 1.3", tls_1_3),
        (
            "TLS 1.2",
            certificate.client(reqwest::tls::Version::TLS_1_2),
        ),
    ] {
        let response = client.get(server.url("/healthz")).send().await.unwrap();
        assert_eq!(
            status_and_json(response).await,
            (200, json!({ "status": "ok" })),
            "{version}"
        );
        let api = Api::with_client(server.address.clone(), client.clone());
        let token = &api.live_token().await;
        let response = client
            .get(server.url("/v1/schemas"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let (status, body) = status_and_json(response).await;
        assert_eq!(status, 200, "{version}: {body}");
        assert!(
            body["schemas"].as_array().is_some_and(|s| !s.is_empty()),
            "{body}"
        );
    }
    assert_eq!(server.terminate(), Some(0));
}

#[actix_web::test]
async fn with_server_tls_plain_http_and_clients_not_trusting_the_certificate_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let certificate = TestCertificate::write(dir.path());
    let config = write_config(
        dir.path(),
        &config_with_tls(&certificate.cert_file, &certificate.key_file),
    );
    let server = BinaryServer::start(&config, data_dir.path());
    let trusting = certificate.client(reqwest::tls::Version::TLS_1_3);
    Api::with_client(server.address.clone(), trusting)
        .wait_ready()
        .await;

    let plain = server.url("/healthz").replacen("https://", "http://", 1);
    let answer = client().get(&plain).send().await;
    assert!(
        answer.is_err(),
        "plain HTTP was answered on the TLS port: {answer:?}"
    );
    let other_dir = tempfile::tempdir().unwrap();
    let other = TestCertificate::write(other_dir.path());
    let answer = other
        .client(reqwest::tls::Version::TLS_1_3)
        .get(server.url("/healthz"))
        .send()
        .await;
    assert!(
        answer.is_err(),
        "a client trusting another certificate got through: {answer:?}"
    );
    assert_eq!(server.terminate(), Some(0));
}

#[test]
fn a_bad_certificate_or_key_stops_start_up_with_a_message_naming_the_key_and_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let certificate = TestCertificate::write(dir.path());
    let other_dir = tempfile::tempdir().unwrap();
    let other = TestCertificate::write(other_dir.path());
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(&garbage, "-----BEGIN CERTIFICATE-----\nnot base64 at all\n").unwrap();
    let missing = dir.path().join("missing.pem");
    // A real certificate followed by padding: valid PEM, but no certificate file is that large.
    let huge = dir.path().join("huge.pem");
    let mut padded = std::fs::read(&certificate.cert_file).unwrap();
    padded.resize(padded.len() + 1024 * 1024, b'\n');
    std::fs::write(&huge, padded).unwrap();
    let cases = [
        (
            "a certificate file over 1 MiB",
            &huge,
            &certificate.key_file,
            "server.tls.cert_file",
            &huge,
        ),
        (
            "a key file over 1 MiB",
            &certificate.cert_file,
            &huge,
            "server.tls.key_file",
            &huge,
        ),
        (
            "a certificate that is not PEM",
            &garbage,
            &certificate.key_file,
            "server.tls.cert_file",
            &garbage,
        ),
        (
            "a missing certificate",
            &missing,
            &certificate.key_file,
            "server.tls.cert_file",
            &missing,
        ),
        (
            "a key file that holds a certificate",
            &certificate.cert_file,
            &certificate.cert_file,
            "server.tls.key_file",
            &certificate.cert_file,
        ),
        (
            "the key of another certificate",
            &certificate.cert_file,
            &other.key_file,
            "server.tls.key_file",
            &other.key_file,
        ),
    ];
    for (description, cert_file, key_file, key, named_file) in cases {
        let config_dir = tempfile::tempdir().unwrap();
        let data_dir = tempfile::tempdir().unwrap();
        let config = write_config(config_dir.path(), &config_with_tls(cert_file, key_file));

        let output = run_to_exit(&config, data_dir.path());

        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.code().is_some_and(|code| code != 0),
            "{description}: exit {:?}, stderr {stderr}",
            output.status
        );
        assert!(
            output.stdout.is_empty(),
            "{description}: something was served: {}",
            String::from_utf8_lossy(&output.stdout)
        );
        assert!(
            stderr.contains(key),
            "{description}: {key} is not named: {stderr}"
        );
        assert!(
            stderr.contains(&named_file.display().to_string()),
            "{description}: the file is not named: {stderr}"
        );
        assert!(
            stderr.contains(&config.display().to_string()),
            "{description}: the config file is not named: {stderr}"
        );
    }
}

#[actix_web::test]
async fn answers_over_tls_carry_hsts_and_a_key_file_others_can_read_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let certificate = TestCertificate::write(dir.path());
    std::fs::set_permissions(
        &certificate.key_file,
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let config = write_config(
        dir.path(),
        &config_with_tls(&certificate.cert_file, &certificate.key_file),
    );
    let (server, log) = BinaryServer::start_logged(&config, data_dir.path(), &[]);
    let client = certificate.client(reqwest::tls::Version::TLS_1_3);
    Api::with_client(server.address.clone(), client.clone())
        .wait_ready()
        .await;
    for path in ["/healthz", "/v1/schemas", "/no/such/path"] {
        let response = client.get(server.url(path)).send().await.unwrap();
        assert_eq!(
            response
                .headers()
                .get("strict-transport-security")
                .and_then(|v| v.to_str().ok()),
            Some("max-age=31536000"),
            "{path} answered {}",
            response.status()
        );
    }
    assert_eq!(server.terminate(), Some(0));
    let log = log.join().unwrap();
    assert!(
        log.contains("TLS private key file can be read by its group or by others")
            && log.contains(&certificate.key_file.display().to_string()),
        "{log}"
    );

    // A key for the service's user alone: no warning.
    std::fs::set_permissions(
        &certificate.key_file,
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let (server, log) = BinaryServer::start_logged(&config, data_dir.path(), &[]);
    Api::with_client(server.address.clone(), client.clone())
        .wait_ready()
        .await;
    assert_eq!(server.terminate(), Some(0));
    let log = log.join().unwrap();
    assert!(!log.contains("TLS private key file"), "{log}");
}

#[actix_web::test]
async fn without_tls_answers_carry_no_hsts() {
    let app = crate::helpers::spawn_app().await;
    let response = client().get(app.url("/healthz")).send().await.unwrap();
    assert!(response
        .headers()
        .get("strict-transport-security")
        .is_none());
}
