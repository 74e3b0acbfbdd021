//! Connections to PostgreSQL, over TLS whenever the URL's `sslmode` asks for it (`require`) or the server
//! offers it (`prefer`, tokio-postgres's default). The server's certificate is checked against the Mozilla
//! roots, or against the operator's CA (`[storage] ca_file`, as a managed database's private CA needs).

use std::path::Path;
use std::sync::Arc;

use tokio_postgres::Client;
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

/// Connects to `url`, its connection driven by a task of the current runtime.
pub(crate) async fn connect(
    url: &str,
    tls: MakeRustlsConnect,
) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(url, tls).await?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::error!(error = %e, "the connection to PostgreSQL ended");
        }
    });
    Ok(client)
}
