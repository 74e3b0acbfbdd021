//! Turning declared accounts, schemas and payers (config file or admin API) into stored records.
//!
//! At start-up the declarations of the configuration are upserted: schemas first (accounts name them), then
//! accounts, then payers. Only a declaration that changed since it was last provisioned is written (its
//! fingerprint is kept in the store), so the store stays the truth between edits of the file: credentials
//! issued, accounts deleted or entries replaced through the admin API survive restarts, and an unchanged
//! schema keeps its version. Each start logs, per entry, which of the two it did.

use chrono::{DateTime, Utc};
use rand::distributions::{Alphanumeric, DistString};
use switchboard_storage::{
    api_secret_matches, hash_api_secret, AccountRecord, CallingHoursRecord, CredentialRecord,
    ElectronicMapping, Environment, FieldCondition, FieldRecord, PayerRecord, PhoneBookEntry,
    PublishRule, SchemaDefinition, SchemaFlags, StorageError, Store,
};

use crate::configuration::specs::{AccountSpec, PayerSpec, SchemaSpec};
use crate::configuration::Settings;
use crate::domain::UsPhone;
use fingerprint::{account_fingerprint, fingerprint, with_later_settings, Covered};

/// Upserts every schema, account and payer the settings declare, skipping declarations unchanged since
/// they were last provisioned.
pub async fn provision(
    store: &Store,
    settings: &Settings,
    now: DateTime<Utc>,
) -> Result<(), StorageError> {
    for spec in &settings.schemas {
        let id = spec
            .id
            .as_deref()
            .expect("validated config schemas have ids");
        let definition = schema_definition(spec);
        let key = format!("schema:{id}");
        let print = fingerprint(&[
            &serde_json::to_string(&definition).expect("schema definition serializes"),
            &format!("{:?}", schema_flags(spec)),
        ]);
        if !changed(store, &key, &print).await? {
            log_kept("schema", id);
            continue;
        }
        let publish = PublishRule::IfChanged {
            first_version: spec.version.unwrap_or(1),
        };
        store
            .publish_schema(
                id,
                &definition,
                schema_flags(spec),
                publish,
                now,
                &[crate::audit::provisioned(
                    now,
                    "schema.change",
                    "schema",
                    id,
                )],
            )
            .await?;
        applied(store, ("schema", id), &key, &print).await?;
    }
    for spec in &settings.accounts {
        let id = spec
            .id
            .as_deref()
            .expect("validated config accounts have ids");
        let key = format!("account:{id}");
        let print = account_fingerprint(spec, Covered::All);
        let provisioned = store.provisioned_fingerprint(&key).await?;
        if provisioned.as_deref() == Some(print.as_str()) {
            log_kept("account", id);
            continue;
        }
        let existing = store.account(id).await?;
        let record = if provisioned == Some(account_fingerprint(spec, Covered::BeforeRetention)) {
            // Applied by a release whose fingerprint left these settings out, and unchanged since in
            // everything else: what the admin API changed stands, and only the settings that release
            // kept out of the store come from the file now (a deleted account stays deleted).
            existing
                .clone()
                .map(|stored| with_later_settings(stored, spec))
        } else {
            Some(account_record(id, spec, existing.as_ref(), now))
        };
        if let Some(record) = record.filter(|record| existing.as_ref() != Some(record)) {
            let event = crate::audit::provisioned(now, "account.change", "account", id);
            store.put_account(&record, &[event]).await?;
        }
        applied(store, ("account", id), &key, &print).await?;
    }
    for spec in &settings.payers {
        let name = spec
            .name
            .as_deref()
            .expect("validated config payers have names");
        let record = payer_record(name, spec);
        let key = format!("payer:{name}");
        let print =
            fingerprint(&[&serde_json::to_string(&record).expect("payer record serializes")]);
        if !changed(store, &key, &print).await? {
            log_kept("payer", name);
            continue;
        }
        let event = crate::audit::provisioned(now, "payer.change", "payer", name);
        store.put_payer(&record, &[event]).await?;
        applied(store, ("payer", name), &key, &print).await?;
    }
    Ok(())
}

/// The file's entry was written to the store: its fingerprint is kept for the next start's comparison.
/// Logs ids only: an entry's other fields hold secrets.
async fn applied(
    store: &Store,
    (kind, id): (&'static str, &str),
    key: &str,
    print: &str,
) -> Result<(), StorageError> {
    store.set_provisioned_fingerprint(key, print).await?;
    tracing::info!(kind, id, "config entry applied to the store");
    Ok(())
}

/// The store's version was kept: the file's entry is the one applied at an earlier start, so whatever
/// the admin API changed since stands.
fn log_kept(kind: &'static str, id: &str) {
    tracing::info!(
        kind,
        id,
        "config entry kept as stored: unchanged in the file since it was last applied"
    );
}

/// Whether the declaration under `key` differs from the one provisioned last.
async fn changed(store: &Store, key: &str, print: &str) -> Result<bool, StorageError> {
    Ok(store.provisioned_fingerprint(key).await?.as_deref() != Some(print))
}

/// The stored form of an account declaration. Declared credentials replace the issued ones, except that a
/// pair declared again with the same key and secret keeps its id, so its live tokens stay valid. With no
/// `credentials` declared, the issued pairs are kept.
pub fn account_record(
    id: &str,
    spec: &AccountSpec,
    existing: Option<&AccountRecord>,
    now: DateTime<Utc>,
) -> AccountRecord {
    let issued = existing
        .map(|a| a.credentials.as_slice())
        .unwrap_or_default();
    let credentials = match &spec.credentials {
        None => issued.to_vec(),
        Some(declared) => declared
            .iter()
            .map(|c| {
                issued
                    .iter()
                    .find(|i| {
                        i.key == c.key
                            && i.environment == c.environment
                            && api_secret_matches(c.secret.expose(), i)
                    })
                    .cloned()
                    .unwrap_or_else(|| CredentialRecord {
                        id: uuid::Uuid::new_v4().to_string(),
                        environment: c.environment,
                        key: c.key.clone(),
                        secret_sha256: String::new(),
                        secret_argon2: hash_api_secret(c.secret.expose()),
                        issued_at: now,
                    })
            })
            .collect(),
    };
    let mut features = spec.features.clone();
    features.sort_by_key(|f| f.as_str());
    features.dedup();
    AccountRecord {
        id: id.to_owned(),
        name: spec.name.clone().unwrap_or_else(|| id.to_owned()),
        daily_call_capacity: spec.daily_call_capacity,
        timezone: spec.timezone.clone(),
        webhook_url: spec.webhook_url.clone(),
        webhook_secret: spec.webhook_secret.as_ref().map(|s| s.expose().to_owned()),
        features,
        schemas: spec.schemas.clone(),
        phone_book: spec
            .phone_book
            .iter()
            .map(|entry| PhoneBookEntry {
                payer: entry.payer.trim().to_owned(),
                phone: UsPhone::parse(&entry.phone)
                    .map_or_else(|| entry.phone.clone(), |p| p.digits().to_owned()),
            })
            .collect(),
        credentials,
        provider_name: spec.provider_name.as_ref().map(|n| n.trim().to_owned()),
        retention_days: spec.retention_days,
        task_timeout_hours: spec.task_timeout_hours,
        dialer: spec.dialer.map(|kind| kind.as_str().to_owned()),
    }
}

/// A fresh key/secret pair for `environment`. Returns the record to store and the plain secret, which is
/// shown once and never stored.
pub fn generate_credential(
    environment: Environment,
    now: DateTime<Utc>,
) -> (CredentialRecord, String) {
    let mut rng = rand::thread_rng();
    let prefix = match environment {
        Environment::Production => "sk_live_",
        Environment::Sandbox => "sk_test_",
    };
    let key = format!("{prefix}{}", Alphanumeric.sample_string(&mut rng, 24));
    let secret = Alphanumeric.sample_string(&mut rng, 40);
    let record = CredentialRecord {
        id: uuid::Uuid::new_v4().to_string(),
        environment,
        key,
        secret_sha256: String::new(),
        secret_argon2: hash_api_secret(&secret),
        issued_at: now,
    };
    (record, secret)
}

/// A fresh webhook signing secret for an account created through the admin API without one: `whsec_` and
/// 40 random letters and digits (about 238 bits). Shown once, in the answer that creates the account.
pub fn generate_webhook_secret() -> String {
    format!(
        "whsec_{}",
        Alphanumeric.sample_string(&mut rand::thread_rng(), 40)
    )
}

/// The stored content of a schema declaration.
pub fn schema_definition(spec: &SchemaSpec) -> SchemaDefinition {
    SchemaDefinition {
        name: spec.name.clone(),
        request_type: spec.request_type.clone(),
        required_inputs: spec.required_inputs.clone(),
        optional_inputs: spec.optional_inputs.clone(),
        follow_up: spec.follow_up.clone(),
        fields: spec
            .fields
            .iter()
            .map(|f| FieldRecord {
                name: f.name.clone(),
                label: f.label.clone(),
                description: f.description.clone(),
                field_type: f.field_type,
                allowed_values: f.allowed_values.clone(),
                required: f.required,
                when: f.when.as_ref().map(|w| FieldCondition {
                    field: w.field.clone(),
                    equals: w.equals.clone(),
                }),
            })
            .collect(),
        electronic: electronic_mapping(spec),
    }
}

/// The electronic mapping of a validated schema declaration (a field whose mapping does not check is
/// left out; validation has refused such a declaration before).
fn electronic_mapping(spec: &SchemaSpec) -> ElectronicMapping {
    ElectronicMapping {
        service_type_codes: spec.electronic_service_types.clone(),
        fields: spec
            .fields
            .iter()
            .filter_map(|f| Some((f.name.clone(), f.electronic_source()?.ok()?)))
            .collect(),
    }
}

/// The visibility flags of a schema declaration.
pub fn schema_flags(spec: &SchemaSpec) -> SchemaFlags {
    SchemaFlags {
        retired: spec.retired,
        hidden: spec.hidden,
    }
}

/// The stored form of a payer declaration; phone numbers are kept as their ten digits.
pub fn payer_record(name: &str, spec: &PayerSpec) -> PayerRecord {
    PayerRecord {
        name: name.trim().to_owned(),
        aliases: spec.aliases.clone(),
        phone: spec
            .phone
            .as_deref()
            .map(|p| UsPhone::parse(p).map_or_else(|| p.to_owned(), |p| p.digits().to_owned())),
        required_inputs: spec.required_inputs.clone(),
        electronic: spec.electronic,
        electronic_payer_id: spec.electronic_payer_id.clone(),
        member_id_prefixes: spec.member_id_prefixes.clone(),
        calling_hours: spec
            .calling_hours
            .as_deref()
            .and_then(|h| crate::configuration::parse_hours(h).ok())
            .map(|(start_minute, end_minute)| CallingHoursRecord {
                start_minute,
                end_minute,
            }),
        timezone: spec.timezone.as_ref().map(|zone| zone.trim().to_owned()),
    }
}

mod fingerprint;
#[cfg(test)]
mod tests;
