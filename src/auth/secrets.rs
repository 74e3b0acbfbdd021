//! Checking an API secret on a key/secret exchange. The store keeps argon2id of each secret
//! ([`switchboard_storage::api_secret_matches`]), tens of milliseconds of CPU and 19 MiB a check: checks run
//! off the HTTP workers, a few at a time (one per core), and each verdict is kept, so a client that
//! exchanges its pair again (or a flood repeating one wrong secret) costs a lookup. Calls other than the
//! exchange carry tokens and never reach this.

use std::collections::HashMap;
use std::sync::Mutex;

use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;
use switchboard_storage::{api_secret_matches, CredentialRecord};
use tokio::sync::Semaphore;

/// Verdicts kept before the map starts over.
const KEPT: usize = 4096;

/// The verdicts reached so far, and the right to run a check.
pub struct SecretChecks {
    /// Keys the map's entries, so the memory of this process holds no fast hash of a secret.
    key: Hmac<Sha256>,
    verdicts: Mutex<HashMap<[u8; 32], bool>>,
    running: Semaphore,
}

impl Default for SecretChecks {
    fn default() -> SecretChecks {
        let mut key = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut key);
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        SecretChecks {
            key: <Hmac<Sha256> as Mac>::new_from_slice(&key).expect("HMAC takes any key length"),
            verdicts: Mutex::new(HashMap::new()),
            running: Semaphore::new(cores),
        }
    }
}

impl SecretChecks {
    /// Whether `secret` is the one `credential` was issued with, or `admitted`'s refusal when, once this
    /// check's turn comes, it no longer admits it: guesses sent at once wait here for their turn, and a
    /// throttle that the earlier ones filled meanwhile must stop them before their hash is computed.
    pub async fn matches<T>(
        &self,
        credential: &CredentialRecord,
        secret: &str,
        admitted: impl Fn() -> Result<(), T>,
    ) -> Result<bool, T> {
        let entry = self.entry(credential, secret);
        if let Some(known) = self.verdicts.lock().expect("verdicts").get(&entry) {
            return Ok(*known);
        }
        let Ok(_turn) = self.running.acquire().await else {
            return Ok(false);
        };
        admitted()?;
        let (credential, secret) = (credential.clone(), secret.to_owned());
        let verdict = actix_web::web::block(move || api_secret_matches(&secret, &credential))
            .await
            .unwrap_or(false);
        let mut verdicts = self.verdicts.lock().expect("verdicts");
        if verdicts.len() >= KEPT {
            verdicts.clear();
        }
        verdicts.insert(entry, verdict);
        Ok(verdict)
    }

    /// The entry of this credential (as issued: its id and hash) and this secret.
    fn entry(&self, credential: &CredentialRecord, secret: &str) -> [u8; 32] {
        let mut mac = self.key.clone();
        for part in [&credential.id, &credential.secret_argon2, secret] {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part.as_bytes());
        }
        mac.finalize().into_bytes().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn a_verdict_is_reached_once_and_kept_per_credential_and_secret() {
        let checks = SecretChecks::default();
        let admitted = || Ok::<(), ()>(());
        let credential = CredentialRecord {
            id: "c1".into(),
            environment: switchboard_storage::Environment::Production,
            key: "sk_live_x".into(),
            secret_sha256: String::new(),
            secret_argon2: switchboard_storage::hash_api_secret("s3cret"),
            issued_at: chrono::Utc::now(),
        };
        assert!(checks
            .matches(&credential, "s3cret", admitted)
            .await
            .unwrap());
        assert!(!checks
            .matches(&credential, "wrong", admitted)
            .await
            .unwrap());
        assert_eq!(checks.verdicts.lock().unwrap().len(), 2);
        assert!(checks
            .matches(&credential, "s3cret", admitted)
            .await
            .unwrap());
        assert_eq!(
            checks.verdicts.lock().unwrap().len(),
            2,
            "answered from memory"
        );
        // The same secret against a credential issued again (another hash) is checked anew.
        let reissued = CredentialRecord {
            secret_argon2: switchboard_storage::hash_api_secret("other"),
            ..credential
        };
        assert!(!checks.matches(&reissued, "s3cret", admitted).await.unwrap());
    }
}

#[cfg(test)]
mod admission {
    use super::*;

    #[actix_web::test]
    async fn a_check_whose_turn_comes_after_the_throttle_filled_is_refused_unhashed() {
        let checks = SecretChecks::default();
        let credential = CredentialRecord {
            id: "c1".into(),
            environment: switchboard_storage::Environment::Production,
            key: "sk_live_x".into(),
            secret_sha256: String::new(),
            secret_argon2: switchboard_storage::hash_api_secret("s3cret"),
            issued_at: chrono::Utc::now(),
        };
        let refused = checks
            .matches(&credential, "guess", || Err("throttled"))
            .await;
        assert_eq!(refused, Err("throttled"));
        assert!(
            checks.verdicts.lock().unwrap().is_empty(),
            "nothing was hashed"
        );
    }
}
