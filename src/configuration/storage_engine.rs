//! `[storage]`: which engine the store runs on.

use super::specs::SpecError;

/// `[storage] kind` and `url`: sled unless PostgreSQL is named, and a URL exactly when it is.
pub(super) fn validate_engine(
    storage: &super::raw::RawStorage,
) -> Result<switchboard_storage::EngineChoice, SpecError> {
    use super::raw::StorageKind;
    let kind = storage.kind.unwrap_or(StorageKind::Sled);
    if kind == StorageKind::Sled && storage.ca_file.is_some() {
        return Err(SpecError::new(
            "storage.ca_file",
            "applies to kind = \"postgres\" only; set kind = \"postgres\" or remove it",
        ));
    }
    match (kind, &storage.url) {
        (StorageKind::Sled, None) => Ok(switchboard_storage::EngineChoice::Sled),
        (StorageKind::Sled, Some(_)) => Err(SpecError::new(
            "storage.url",
            "applies to kind = \"postgres\" only; set kind = \"postgres\" or remove it",
        )),
        (StorageKind::Postgres, None) => Err(SpecError::new(
            "storage.url",
            "is required with kind = \"postgres\" (postgres://user:password@host:port/database)",
        )),
        (StorageKind::Postgres, Some(url)) => {
            let url = url.expose().trim();
            if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                return Err(SpecError::new(
                    "storage.url",
                    "must be a postgres:// or postgresql:// URL",
                ));
            }
            Ok(switchboard_storage::EngineChoice::Postgres {
                url: url.to_owned(),
                ca_file: storage.ca_file.as_deref().map(std::path::PathBuf::from),
            })
        }
    }
}
