//! What Switchboard learns of each payer's line (operator contract §11): the `payer_stats` tree, one
//! [`PayerDayRecord`] per payer and local day. A finished request's calls are added in the transaction
//! that stores it finished ([`crate::Store::commit_final`]), which happens once per request, so a call is
//! never counted twice, whatever restarts come between. Days older than [`KEPT_DAYS`] are dropped by
//! [`Store::forget_payer_days_before`] (retention's loop) and ignored by every read before that.

use std::collections::BTreeMap;

use chrono::{Datelike, NaiveDate};

use crate::codec::{decode, encode};
use crate::engine::TxResult;
use crate::group::Txn;
use crate::{PayerDayRecord, PayerLearning, StorageError, Store};

/// How many days of a payer's line are kept.
pub const KEPT_DAYS: u32 = 90;

/// `payer name \0 day (days from the common era, u32 BE)`.
fn day_key(payer: &str, day: NaiveDate) -> Vec<u8> {
    let mut key = Vec::with_capacity(payer.len() + 5);
    key.extend_from_slice(payer.as_bytes());
    key.push(0);
    key.extend_from_slice(&(day.num_days_from_ce().max(0) as u32).to_be_bytes());
    key
}

/// The day of a key, when it is one.
fn key_day(key: &[u8]) -> Option<NaiveDate> {
    let day: [u8; 4] = key.get(key.len().checked_sub(4)?..)?.try_into().ok()?;
    NaiveDate::from_num_days_from_ce_opt(u32::from_be_bytes(day) as i32)
}

/// Adds `learning` to its payer's days, inside the transaction that stores its request finished. A day
/// record that cannot be read is started afresh (the aggregates are a guide, never a reason to hold a
/// request's end back).
pub(crate) fn learn(txn: &Txn, learning: &PayerLearning) -> TxResult<()> {
    let mut days: BTreeMap<NaiveDate, PayerDayRecord> = BTreeMap::new();
    let touched = learning
        .calls
        .iter()
        .map(|c| c.day)
        .chain(learning.completed_on);
    for day in touched {
        if days.contains_key(&day) {
            continue;
        }
        let stored = txn.payer_stats.get(day_key(&learning.payer, day))?;
        let record = match stored.map(|bytes| decode::<PayerDayRecord>(&bytes)) {
            Some(Ok(record)) => record,
            Some(Err(e)) => {
                tracing::warn!(error = %e, "a payer's day of statistics could not be read; started afresh");
                PayerDayRecord::default()
            }
            None => PayerDayRecord::default(),
        };
        days.insert(day, record);
    }
    for call in &learning.calls {
        days.entry(call.day).or_default().add_call(call);
    }
    if let Some(day) = learning.completed_on {
        days.entry(day).or_default().completed_requests += 1;
    }
    for (day, record) in days {
        txn.payer_stats
            .put(day_key(&learning.payer, day), encode(&record))?;
    }
    Ok(())
}

impl Store {
    /// The days learned of `payer` from `since` on, oldest first.
    pub async fn payer_days(
        &self,
        payer: &str,
        since: NaiveDate,
    ) -> Result<Vec<(NaiveDate, PayerDayRecord)>, StorageError> {
        let mut prefix = payer.as_bytes().to_vec();
        prefix.push(0);
        let entries = self.group.payer_stats.read_prefix(&prefix).await?;
        let mut days = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            // The prefix also matches a longer name that starts with this one and a NUL: none do, but
            // the key's length says for sure.
            if key.len() != prefix.len() + 4 {
                continue;
            }
            match key_day(&key) {
                Some(day) if day >= since => days.push((day, decode(&value)?)),
                _ => {}
            }
        }
        Ok(days)
    }

    /// Drops every payer's days before `before`; answers how many went. Not flushed: a day dropped again
    /// after a crash is dropped again at the next round.
    pub async fn forget_payer_days_before(&self, before: NaiveDate) -> Result<usize, StorageError> {
        let _open = self.group.gate.read().expect("write gate");
        let mut old = Vec::new();
        for entry in self.group.payer_stats.iter() {
            let (key, _) = entry?;
            if key_day(&key).is_some_and(|day| day < before) {
                old.push(key);
            }
        }
        for key in &old {
            self.group.payer_stats.remove(key)?;
        }
        Ok(old.len())
    }
}
