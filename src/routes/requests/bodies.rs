//! Answers of `GET /v1/requests/{requestId}` kept serialized: a client polls its request until it ends, and
//! each poll of an unchanged request serialized the same record into the same body again.
//!
//! A body depends on the record and the caller's account (its optional fields and features), and on the
//! time only through recording links, whose signatures expire: a body with a recording is never kept. An
//! entry is used only while the store still hands out the very same decoded record and account (`Arc`
//! identity, which changes whenever either is written), so no write path has to invalidate anything.

use std::sync::Arc;

use actix_web::web::Bytes;
use switchboard_storage::{AccountRecord, RequestId, RequestRecord};

use crate::memo::Memo;

/// Bodies kept before the memo starts over: far fewer than the other memos, a body is kilobytes.
const CAPACITY: usize = 256;

/// A body and what it was serialized from; holding both keeps their identities from being reused.
#[derive(Clone)]
struct Kept {
    record: Arc<RequestRecord>,
    account: Arc<AccountRecord>,
    body: Bytes,
}

/// Serialized single-read bodies of requests, by id.
pub struct RequestBodies {
    kept: Memo<RequestId, Kept>,
}

impl RequestBodies {
    /// No body kept yet.
    pub fn new() -> RequestBodies {
        RequestBodies {
            kept: Memo::with_capacity(CAPACITY),
        }
    }

    /// The body of `record` read by `account`, serialized by `serialize` unless the same record and account
    /// were serialized before.
    pub fn body(
        &self,
        record: &Arc<RequestRecord>,
        account: &Arc<AccountRecord>,
        serialize: impl FnOnce() -> Bytes,
    ) -> Bytes {
        if let Some(kept) = self.kept.get(&record.id) {
            if Arc::ptr_eq(&kept.record, record) && Arc::ptr_eq(&kept.account, account) {
                return kept.body;
            }
        }
        let body = serialize();
        if !has_recording(record) {
            self.kept.remember(
                record.id.clone(),
                Kept {
                    record: Arc::clone(record),
                    account: Arc::clone(account),
                    body: body.clone(),
                },
            );
        }
        body
    }
}

impl Default for RequestBodies {
    fn default() -> RequestBodies {
        RequestBodies::new()
    }
}

/// Whether the body links a recording, whose signed link depends on when it is read.
fn has_recording(record: &RequestRecord) -> bool {
    record.run.as_ref().is_some_and(|run| {
        run.calls.iter().any(|call| {
            call.outcome
                .as_ref()
                .is_some_and(|outcome| outcome.recording)
        })
    })
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn record(recording: bool) -> Arc<RequestRecord> {
        let json = r#"{"id": "r1", "account_id": "acme", "environment": "production", "batch_id": "b1",
            "schema_id": "vob", "schema_version": 1, "request_type": "vob", "inputs": {},
            "internal_id": null, "internal_tag": null, "webhook_url": null, "ai_only": false,
            "onshore_only": false, "payer_lookup": null, "dial": null, "credential_id": null,
            "payer_electronic": false, "electronic_payer_id": null, "state": "SUCCESS",
            "created_at": "2026-11-23T14:00:00Z", "due_date": "2026-11-23", "due_at": "2026-11-23T05:00:00Z",
            "completed_at": null,
            "run": {"started_at": null, "schema_version": 1, "steps": [], "calls": [{
                "id": "c1", "seq": 1, "step_key": "step-1", "attempt": 1, "to": "8005550100",
                "number_source": "input", "placed_at": "2026-11-23T14:00:00Z", "platform": null,
                "outcome": {"ended_at": "2026-11-23T14:05:00Z", "disposition": "completed",
                    "duration_seconds": 300, "captured": {}, "transcript": null, "transcript_post_call": null,
                    "summary": null, "audit_summary": null, "recording": RECORDING, "from_number": null,
                    "failure": null, "referral_number": null, "follow_up_requested": false}}],
                "electronic": null, "results": {}, "result_sources": {}, "missing_fields": [],
                "modality": null, "error": null, "result_summary": null, "restarts": [], "faults": 0}}"#
            .replace("RECORDING", &recording.to_string());
        Arc::new(serde_json::from_str(&json).expect("a stored request"))
    }

    fn account() -> Arc<AccountRecord> {
        let json = serde_json::json!({"id": "acme", "name": "Acme", "timezone": "America/New_York",
            "daily_call_capacity": 10, "webhook_url": null, "webhook_secret": null, "features": [],
            "schemas": [], "phone_book": [], "credentials": []});
        Arc::new(serde_json::from_value(json).expect("an account"))
    }

    /// Asks `bodies` for a body and tells whether it serialized one.
    fn serialized(
        bodies: &RequestBodies,
        record: &Arc<RequestRecord>,
        account: &Arc<AccountRecord>,
    ) -> bool {
        let called = Cell::new(false);
        bodies.body(record, account, || {
            called.set(true);
            Bytes::from_static(b"{}")
        });
        called.get()
    }

    #[test]
    fn a_body_is_serialized_again_only_for_another_record_or_account_or_a_recording() {
        let bodies = RequestBodies::new();
        let (plain, acme) = (record(false), account());
        assert!(serialized(&bodies, &plain, &acme));
        assert!(
            !serialized(&bodies, &plain, &acme),
            "the same record and account"
        );
        // Equal but not the same: the store decoded it afresh, so it may have changed.
        assert!(serialized(&bodies, &record(false), &acme));
        assert!(serialized(&bodies, &plain, &account()));
        let recorded = record(true);
        assert!(serialized(&bodies, &recorded, &acme));
        assert!(
            serialized(&bodies, &recorded, &acme),
            "a recording link expires"
        );
    }
}
