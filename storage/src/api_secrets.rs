//! API secrets at rest: argon2id (RustCrypto, its default parameters: 19 MiB, two passes, one lane) over
//! the lowercase hex SHA-256 of the secret, salted per credential. A copy of the store then gives no cheap
//! way to test guesses of a secret an operator chose, and a store of an earlier release, which kept the
//! SHA-256 alone, is upgraded by `switchboard migrate` without knowing any secret.
//!
//! Checking a secret costs tens of milliseconds of CPU and 19 MiB: the HTTP layer checks one only on a
//! key/secret exchange, never per call (calls carry tokens), and keeps the verdicts it reached.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::SaltString;
use argon2::{Argon2, PasswordHash, PasswordHasher, PasswordVerifier};
use sha2::{Digest, Sha256};

use crate::codec::encode;
use crate::engine::operations::Accounts;
use crate::{trees, CredentialRecord, StorageError, Store};

/// The stored form of the API secret `secret`: a PHC string of argon2id over its SHA-256.
pub fn hash_api_secret(secret: &str) -> String {
    hash_digest(&sha256_hex(secret))
}

/// Whether `secret` is the one `credential` was issued with.
pub fn api_secret_matches(secret: &str, credential: &CredentialRecord) -> bool {
    PasswordHash::new(&credential.secret_argon2).is_ok_and(|hash| {
        Argon2::default()
            .verify_password(sha256_hex(secret).as_bytes(), &hash)
            .is_ok()
    })
}

fn sha256_hex(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

fn hash_digest(digest: &str) -> String {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(digest.as_bytes(), &salt)
        .expect("argon2 with its default parameters hashes any input")
        .to_string()
}

impl Store {
    /// Once, by `switchboard migrate` ([`crate::layout`]): replaces each SHA-256 an earlier release kept
    /// for a secret by argon2id over it. Answers how many credentials it upgraded.
    pub(crate) async fn hash_api_secrets(&self) -> Result<u64, StorageError> {
        let mut upgraded = 0;
        for (id, stored) in self.engine().accounts().await? {
            // A record without this store's MAC is refused (and logged) here as on every read.
            let Ok(mut record) = self.stored_account(&id, &stored) else {
                continue;
            };
            let mut changed = false;
            for credential in &mut record.credentials {
                if credential.secret_argon2.is_empty() && !credential.secret_sha256.is_empty() {
                    credential.secret_argon2 = hash_digest(&credential.secret_sha256);
                    credential.secret_sha256.clear();
                    changed = true;
                    upgraded += 1;
                }
            }
            if changed {
                let stored = self.bound(trees::ACCOUNTS, id.as_bytes(), &encode(&record));
                self.engine().rewrite_account(&id, stored).await?;
            }
        }
        if upgraded > 0 {
            tracing::info!(
                credentials = upgraded,
                "API secret digests rehashed with argon2id (switchboard migrate)"
            );
        }
        Ok(upgraded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credential(secret: &str) -> CredentialRecord {
        CredentialRecord {
            id: "c1".into(),
            environment: crate::Environment::Production,
            key: "sk_live_x".into(),
            secret_sha256: String::new(),
            secret_argon2: hash_api_secret(secret),
            issued_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn a_secret_matches_its_salted_hash_only() {
        let issued = credential("s3cret");
        assert!(issued.secret_argon2.starts_with("$argon2id$"));
        assert!(api_secret_matches("s3cret", &issued));
        assert!(!api_secret_matches("s3cres", &issued));
        assert_ne!(
            issued.secret_argon2,
            credential("s3cret").secret_argon2,
            "salted"
        );
        let bare = CredentialRecord {
            secret_argon2: String::new(),
            secret_sha256: sha256_hex("s3cret"),
            ..issued
        };
        assert!(
            !api_secret_matches("s3cret", &bare),
            "a bare digest is no hash"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_digest_of_an_earlier_release_is_rehashed_by_migrate_and_its_secret_still_matches() {
        let dir = tempfile::tempdir().unwrap();
        let mut account = crate::AccountRecord {
            id: "acme".into(),
            name: "Acme".into(),
            daily_call_capacity: 10,
            timezone: "UTC".into(),
            webhook_url: None,
            webhook_secret: None,
            features: vec![],
            schemas: vec![],
            phone_book: vec![],
            credentials: vec![CredentialRecord {
                secret_sha256: sha256_hex("s3cret"),
                secret_argon2: String::new(),
                ..credential("unused")
            }],
            provider_name: None,
            retention_days: None,
            task_timeout_hours: None,
            dialer: None,
        };
        {
            let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
            store.put_account(&account, &[]).await.unwrap();
            store.keyring_at_layout_for_tests(1).unwrap();
            store.close().unwrap();
        }
        let upgrade = Store::migrate(
            dir.path(),
            crate::DEFAULT_CACHE_BYTES,
            &crate::seal::KeySource::BesideData,
            &crate::EngineChoice::Sled,
        )
        .await
        .unwrap()
        .unwrap();
        assert_eq!(upgrade.secrets_rehashed, 1);
        let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
        let read = store.account("acme").await.unwrap().unwrap();
        let credential = &read.credentials[0];
        assert!(
            credential.secret_sha256.is_empty(),
            "the bare digest is gone"
        );
        assert!(api_secret_matches("s3cret", credential));
        account.credentials[0].secret_argon2 = credential.secret_argon2.clone();
        account.credentials[0].secret_sha256.clear();
        assert_eq!(read, account);
    }
}
