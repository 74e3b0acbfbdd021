//! An account's webhook signing secret, sealed inside its otherwise plain record: with it, anyone holding a
//! copy of `data_dir` could sign webhooks the account's receiver accepts. The rest of the record (names,
//! capacity, schemas, API key ids and secret hashes) is configuration, not PHI, and stays readable.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use crate::codec::encode;
use crate::engine::operations::Accounts;
use crate::seal::Sealed;
use crate::{AccountRecord, StorageError, Store};

/// Marks a sealed secret in the record. It starts with a NUL, which no secret an operator types holds.
const SEALED: &str = "\u{0}sealed:";

impl Store {
    /// The stored form of `account`, a record as the layers above hold it: its webhook secret sealed.
    pub(crate) fn account_bytes(&self, account: &AccountRecord) -> Vec<u8> {
        match &account.webhook_secret {
            Some(secret) => {
                let sealed = self.sealer.seal(
                    Sealed::AccountSecrets,
                    account.id.as_bytes(),
                    secret.as_bytes(),
                );
                let mut stored = account.clone();
                stored.webhook_secret = Some(format!("{SEALED}{}", STANDARD.encode(sealed)));
                encode(&stored)
            }
            None => encode(account),
        }
    }

    /// A record as stored, with its webhook secret opened.
    pub(crate) fn opened_account(
        &self,
        mut stored: AccountRecord,
    ) -> Result<AccountRecord, StorageError> {
        if let Some(secret) = stored.webhook_secret.take() {
            let unreadable = || StorageError::Corrupt {
                kind: "account",
                reason: "its webhook secret is not sealed here".into(),
            };
            let sealed = secret
                .strip_prefix(SEALED)
                .and_then(|text| STANDARD.decode(text).ok())
                .ok_or_else(unreadable)?;
            let plain = self
                .sealer
                .open(Sealed::AccountSecrets, stored.id.as_bytes(), &sealed)?;
            stored.webhook_secret = Some(String::from_utf8(plain).map_err(|_| unreadable())?);
        }
        Ok(stored)
    }

    /// Once, by `switchboard migrate` ([`crate::layout`]): seals the webhook secrets that releases before
    /// 2026-11-28 stored in the clear, so no read finds one in the clear afterwards. Answers how many.
    pub(crate) async fn seal_account_secrets(&self) -> Result<u64, StorageError> {
        let mut sealed = 0;
        for (id, bytes) in self.engine().accounts().await? {
            // A record without this store's MAC is refused (and logged) here as on every read.
            let Ok(record) = self.stored_account(&id, &bytes) else {
                continue;
            };
            if record
                .webhook_secret
                .as_deref()
                .is_some_and(|secret| !secret.starts_with(SEALED))
            {
                let stored = self.bound(
                    crate::trees::ACCOUNTS,
                    id.as_bytes(),
                    &self.account_bytes(&record),
                );
                self.engine().rewrite_account(&id, stored).await?;
                sealed += 1;
            }
        }
        Ok(sealed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestEngine;

    fn account(secret: Option<&str>) -> AccountRecord {
        AccountRecord {
            id: "acme".into(),
            name: "Acme".into(),
            daily_call_capacity: 10,
            timezone: "UTC".into(),
            webhook_url: None,
            webhook_secret: secret.map(str::to_owned),
            features: Vec::new(),
            schemas: Vec::new(),
            phone_book: Vec::new(),
            credentials: Vec::new(),
            provider_name: None,
            retention_days: None,
            task_timeout_hours: None,
            dialer: None,
        }
    }

    fn stored_bytes(store: &Store) -> Vec<u8> {
        store
            .raw_get_for_tests(crate::trees::ACCOUNTS, b"acme")
            .unwrap()
            .unwrap()
    }

    fn holds(haystack: &[u8], needle: &str) -> bool {
        haystack
            .windows(needle.len())
            .any(|w| w == needle.as_bytes())
    }

    async fn a_webhook_secret_is_sealed_at_rest_and_reads_back(engine: TestEngine) {
        let dir = tempfile::tempdir().unwrap();
        let store = engine.open(dir.path()).unwrap();
        let secret = "whsec_sealed_marker_7f3a";
        store
            .put_account(&account(Some(secret)), &[])
            .await
            .unwrap();
        assert!(!holds(&stored_bytes(&store), secret), "sealed at rest");
        let read = store.account("acme").await.unwrap().unwrap();
        assert_eq!(read.webhook_secret.as_deref(), Some(secret));
        assert_eq!(
            store.accounts().await.unwrap()[0].webhook_secret.as_deref(),
            Some(secret)
        );
        // A change that rewrites the stored record keeps the secret sealed and readable.
        let credential = crate::CredentialRecord {
            id: "c1".into(),
            environment: crate::Environment::Sandbox,
            key: "sk_test_x".into(),
            secret_sha256: "00".into(),
            secret_argon2: String::new(),
            issued_at: chrono::Utc::now(),
        };
        store.add_credential("acme", credential, &[]).await.unwrap();
        assert!(!holds(&stored_bytes(&store), secret));
        let read = store.account("acme").await.unwrap().unwrap();
        assert_eq!(read.webhook_secret.as_deref(), Some(secret));
        // An account without one stores none.
        store.put_account(&account(None), &[]).await.unwrap();
        assert_eq!(
            store.account("acme").await.unwrap().unwrap().webhook_secret,
            None
        );
    }

    crate::on_both_engines!(a_webhook_secret_is_sealed_at_rest_and_reads_back);

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_secret_stored_in_the_clear_by_an_earlier_release_is_sealed_by_migrate() {
        let dir = tempfile::tempdir().unwrap();
        let secret = "whsec_from_before_9b1c";
        {
            let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
            store
                .accounts
                .insert("acme", encode(&account(Some(secret))))
                .unwrap();
            store.keyring_at_layout_for_tests(0).unwrap();
            store.close().unwrap();
        }
        assert!(
            Store::open(&crate::StorageConfig::embedded(dir.path())).is_err(),
            "no start converts it"
        );
        let upgrade = Store::migrate(
            dir.path(),
            crate::DEFAULT_CACHE_BYTES,
            &crate::seal::KeySource::BesideData,
            &crate::EngineChoice::Sled,
        )
        .await
        .unwrap()
        .unwrap();
        assert_eq!(upgrade.secrets_sealed, 1);
        let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
        assert!(!holds(&stored_bytes(&store), secret), "sealed by migrate");
        let read = store.account("acme").await.unwrap().unwrap();
        assert_eq!(read.webhook_secret.as_deref(), Some(secret));
    }
}
