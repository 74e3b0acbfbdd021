//! Where the exporter's spans go and what the log says about it: an `https` endpoint given as the full
//! traces URL, its certificate from a private authority named by `[telemetry] ca_file`, receives the spans
//! (at `/v1/traces`, not doubled), and the log says at start where traces go; an endpoint nobody listens
//! on is a warning in the log, with its cause.

use rustls_pki_types::{CertificateDer, PrivatePkcs8KeyDer};

use crate::helpers::{write_config, BinaryServer};
use crate::receiver::Receiver;
use crate::telemetry::{config, create, request_span, start_collector_with, token, LIMIT};

/// A certificate authority and a `localhost` server certificate it signed: the authority's PEM, and the
/// server's TLS configuration.
fn private_authority() -> (String, rustls::ServerConfig) {
    let mut authority = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    authority.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let authority =
        rcgen::CertifiedIssuer::self_signed(authority, rcgen::KeyPair::generate().unwrap())
            .unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let server = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&key, &authority)
        .unwrap();
    let chain: Vec<CertificateDer<'static>> = vec![server.der().clone()];
    let tls = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, PrivatePkcs8KeyDer::from(key.serialize_der()).into())
        .unwrap();
    (authority.pem(), tls)
}

#[actix_web::test]
async fn an_https_collector_given_as_its_traces_url_and_trusted_through_ca_file_gets_the_spans() {
    let (authority, tls) = private_authority();
    let (collector, collected) = start_collector_with(Some(tls));
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("collector-ca.pem");
    std::fs::write(&ca_file, authority).unwrap();
    let mut config = config(false);
    config.set("telemetry.ca_file", ca_file.display().to_string());
    let path = write_config(dir.path(), &config);
    let data_dir = tempfile::tempdir().unwrap();
    // The full URL, as vendors print it: posted to as it is, not to `.../v1/traces/v1/traces`.
    let endpoint = format!("{collector}/v1/traces");
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ("RUST_LOG", "info"),
    ];
    let (server, log) = BinaryServer::start_logged(&path, data_dir.path(), &env);
    server.wait_ready().await;
    let token = token(&server.address).await;
    let id = create(&server.address, &token, &receiver.url("/hook"), None).await;
    request_span(&collected, &id).await;
    assert_eq!(server.terminate(), Some(0));
    let log = log.join().unwrap();
    let announced = log
        .lines()
        .find(|line| line.contains("traces are on"))
        .unwrap_or_else(|| panic!("no start line about traces: {log}"));
    assert!(announced.contains(&endpoint), "{announced}");
    assert!(!log.contains("could not be exported"), "{log}");
}

#[actix_web::test]
async fn an_endpoint_nobody_listens_on_is_a_warning_with_its_cause() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &config(false));
    let data_dir = tempfile::tempdir().unwrap();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
    ];
    let (server, log) = BinaryServer::start_logged(&path, data_dir.path(), &env);
    server.wait_ready().await;
    let token = token(&server.address).await;
    create(&server.address, &token, &receiver.url("/hook"), None).await;
    receiver.wait_for(1, LIMIT).await;
    // A graceful stop sends what is queued: at the latest then, a batch meets the closed port.
    assert_eq!(server.terminate(), Some(0));
    let log = log.join().unwrap();
    let warnings: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("traces could not be exported"))
        .collect();
    assert!(
        !warnings.is_empty(),
        "no warning about the lost spans: {log}"
    );
    let first = warnings[0];
    assert!(first.contains("WARN"), "{first}");
    assert!(first.contains("onnection refused"), "the cause: {first}");
    assert!(
        first.contains(&format!("{endpoint}/v1/traces")),
        "where: {first}"
    );
    assert!(warnings.len() <= 2, "rate-limited: {warnings:?}");
}
