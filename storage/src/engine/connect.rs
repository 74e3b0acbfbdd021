//! Connections to PostgreSQL, over TLS whenever the URL's `sslmode` asks for it (`require`) or the server
//! offers it (`prefer`, tokio-postgres's default). The server's certificate is checked against the Mozilla
//! roots, or against the operator's CA (`[storage] ca_file`, as a managed database's private CA needs).

use std::path::Path;
use std::sync::Arc;

use futures::StreamExt;
use tokio_postgres::error::{DbError, Severity};
use tokio_postgres::{AsyncMessage, Client};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::StorageError;

/// The TLS connector for a database whose certificate is signed by `ca_file`'s CA, or a public one.
pub(crate) fn tls(ca_file: Option<&Path>) -> Result<MakeRustlsConnect, StorageError> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Some(path) = ca_file {
        use rustls::pki_types::pem::PemObject;
        let certificates = rustls::pki_types::CertificateDer::pem_file_iter(path)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| {
                StorageError::Database(format!(
                    "cannot read storage.ca_file {}: {e}",
                    path.display()
                ))
            })?;
        for certificate in certificates {
            roots.add(certificate).map_err(|e| {
                StorageError::Database(format!("storage.ca_file {}: {e}", path.display()))
            })?;
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| StorageError::Database(format!("TLS: {e}")))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// Connects to `url`, its connection driven by a task of the current runtime, which logs the server's
/// notices (see [`log_notice`]).
pub(crate) async fn connect(
    url: &str,
    tls: MakeRustlsConnect,
) -> Result<Client, tokio_postgres::Error> {
    let (client, mut connection) = tokio_postgres::connect(url, tls).await?;
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notice(notice)) => log_notice(&notice),
                // Notifications answer LISTEN, which the engine never sends.
                Ok(_) => {}
                Err(e) => {
                    tracing::error!(error = %e, "the connection to PostgreSQL ended");
                    break;
                }
            }
        }
    });
    Ok(client)
}

/// A notice the server sent on a connection. tokio-postgres alone logs every notice at INFO; here a
/// WARNING is a warning (a statement the server found out of place, which the engine should never send),
/// and the rest (NOTICE and below: a migration's "already exists, skipping") is for debugging only. The
/// engine's statements carry values as parameters, so a notice's text holds none of them.
fn log_notice(notice: &DbError) {
    #[cfg(test)]
    NOTICES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(notice.message().to_owned());
    let (code, message) = (notice.code().code(), notice.message());
    match notice.parsed_severity() {
        Some(Severity::Warning) => {
            tracing::warn!(code, "PostgreSQL warned: {message}")
        }
        _ => tracing::debug!(code, severity = notice.severity(), "PostgreSQL: {message}"),
    }
}

/// Every notice received in this test process, for tests that must see none of a kind.
#[cfg(test)]
pub(crate) static NOTICES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// A failed connection to `url`, said so that an operator can act on it: which server, database and user
/// (never the password), the cause, and what to check for the usual causes.
pub(crate) fn unreachable(url: &str, cause: &str) -> StorageError {
    let target = match url.parse::<tokio_postgres::Config>() {
        Ok(config) => {
            let hosts: Vec<String> = config
                .get_hosts()
                .iter()
                .zip(config.get_ports().iter().chain(std::iter::repeat(&5432)))
                .map(|(host, port)| match host {
                    tokio_postgres::config::Host::Tcp(name) => format!("{name}:{port}"),
                    #[cfg(unix)]
                    tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
                })
                .collect();
            format!(
                " at {} (database {}, user {})",
                hosts.join(", "),
                config.get_dbname().unwrap_or("(the user's)"),
                config.get_user().unwrap_or("(none)")
            )
        }
        Err(_) => String::new(),
    };
    StorageError::Database(format!(
        "cannot connect to the database{target}: {cause}{}",
        hint(cause)
    ))
}

/// What to check for the usual causes of a failed connection.
fn hint(cause: &str) -> &'static str {
    let cause = cause.to_ascii_lowercase();
    if cause.contains("tls") || cause.contains("certificate") || cause.contains("handshake") {
        " (check that [storage] ca_file names the CA that signed the database's certificate, and that \
         the host in [storage] url is a name that certificate lists)"
    } else if cause.contains("refused") || cause.contains("timed out") || cause.contains("lookup") {
        " (check that PostgreSQL runs and listens at the host and port of [storage] url)"
    } else if cause.contains("password") || cause.contains("authentication") {
        " (check the user and password in [storage] url)"
    } else if cause.contains("does not exist") {
        " (create the database, then run `switchboard migrate --config PATH`)"
    } else {
        ""
    }
}
