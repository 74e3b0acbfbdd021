//! Where the master key comes from: `SWITCHBOARD_MASTER_KEY` (the key itself, as a secrets manager
//! injects it) wins over `[encryption] key_file`; with neither, the store keeps it beside the data.

use anyhow::Context;
use switchboard_storage::seal::{KeySource, MasterKey};

use crate::client_ip::ForwardingKey;
use crate::configuration::Settings;

/// The environment variable holding the master key as base64 text.
pub const MASTER_KEY_VAR: &str = "SWITCHBOARD_MASTER_KEY";

/// The master key the settings and the environment name.
pub fn key_source(settings: &Settings) -> anyhow::Result<KeySource> {
    if let Some(text) = std::env::var(MASTER_KEY_VAR)
        .ok()
        .filter(|t| !t.trim().is_empty())
    {
        let key = MasterKey::from_base64(&text, MASTER_KEY_VAR)?;
        if let Some(path) = &settings.master_key_file {
            tracing::warn!(
                key_file = %path.display(),
                "both SWITCHBOARD_MASTER_KEY and [encryption] key_file are set: the environment's key is \
                 used and key_file is ignored"
            );
        }
        return Ok(KeySource::Given {
            key,
            origin: MASTER_KEY_VAR.to_owned(),
        });
    }
    match &settings.master_key_file {
        Some(path) => {
            let key = MasterKey::read_file(path).context("encryption.key_file")?;
            warn_if_readable_by_others(path);
            Ok(KeySource::Given {
                key,
                origin: format!("encryption.key_file {}", path.display()),
            })
        }
        None => Ok(KeySource::BesideData),
    }
}

/// Reads `[encryption] key_file` when it is the key in use (the environment's key wins over it), so that
/// the binary can refuse an unusable one as a configuration error, as it does the TLS files, before it
/// creates anything.
pub fn check_key_file(settings: &Settings) -> anyhow::Result<()> {
    let from_env = std::env::var(MASTER_KEY_VAR).is_ok_and(|text| !text.trim().is_empty());
    match &settings.master_key_file {
        Some(path) if !from_env => {
            MasterKey::read_file(path).context("encryption.key_file")?;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The key with which nodes sharing a database prove a forwarded client's address: derived from the master
/// key, so every node has it and no client does. `None` while a key kept beside the data does not exist yet
/// (a node's first start): forwarded addresses are then the forwarding node's.
pub fn forwarding_key(source: &KeySource, settings: &Settings) -> Option<ForwardingKey> {
    let master = match source {
        KeySource::Given { key, .. } => key.clone(),
        KeySource::BesideData => {
            MasterKey::read_file(&KeySource::beside_data_path(&settings.server.data_dir)).ok()?
        }
    };
    Some(ForwardingKey::derive(&master))
}

/// Logs, at every start, what the key's whereabouts mean for a copy of the data.
pub fn log_key_source(source: &KeySource, settings: &Settings) {
    match source {
        KeySource::Given { origin, .. } => {
            tracing::info!(key = %origin, "the store is sealed under the operator's master key")
        }
        KeySource::BesideData => tracing::warn!(
            key_file = %KeySource::beside_data_path(&settings.server.data_dir).display(),
            "the master key lives beside the data it protects: anyone who copies data_dir can read it. \
             Fine for a demo; for real patients set [encryption] key_file to a file outside data_dir, \
             or SWITCHBOARD_MASTER_KEY"
        ),
    }
}

#[cfg(unix)]
fn warn_if_readable_by_others(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path) {
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::warn!(
                key_file = %path.display(),
                mode = format!("{:o}", mode & 0o777),
                "the master key file can be read by other users; chmod 0400 it"
            );
        }
    }
}

#[cfg(not(unix))]
fn warn_if_readable_by_others(_path: &std::path::Path) {}
