//! Tasks for people (operator contract section 10). A task lives in its request's run, so opening,
//! claiming, releasing and closing one is a change of the request, written like every other request
//! change (grouped, durable before it returns) together with its entry in the `tasks` index and its audit
//! event. A change reads the task as stored inside the transaction and declines when it finds the task
//! in another state than it needs: of two completions raced, the second finds it done.

use std::sync::Arc;

use crate::audit::NewEvent;
use crate::codec::encode;
use crate::engine::Bytes;
use crate::group::{Queued, Txn};
use crate::runs::{store_written, stored_record, Standing};
use crate::seal::Sealed;
use crate::{RequestId, RequestRecord, StorageError, Store, TaskRecord};

/// One page of the `tasks` index: `(task id, request id)`, oldest first.
pub type TaskEntries = Vec<(String, RequestId)>;

impl Store {
    /// Stores `record` (still running) with the task it opened, the task's index entry and `event`, in one
    /// grouped write; returns once durable. Nothing is written when the stored request already has a task
    /// or has ended (a second opening, after a restart, finds the first).
    pub async fn open_task(
        &self,
        record: RequestRecord,
        event: NewEvent,
    ) -> Result<bool, StorageError> {
        let Some(task_id) = record
            .run
            .as_ref()
            .and_then(|run| run.task.as_ref())
            .map(|task| task.id.clone())
        else {
            return Ok(false);
        };
        let id = record.id.clone();
        let record = Arc::new(record);
        let (decoded, intake, sealer) = (
            Arc::clone(&self.decoded_requests),
            Arc::clone(&self.decoded_intake),
            Arc::clone(&self.sealer),
        );
        let job = Queued::job(move |txn: &Txn| {
            let stored = match stored_record(txn, &decoded, &intake, &id)? {
                Ok(stored) => stored,
                Err(e) => return Ok(Err(e)),
            };
            let has_task = stored.run.as_ref().is_some_and(|run| run.task.is_some());
            if stored.state.is_terminal() || has_task {
                return Ok(Ok(false));
            }
            let encoded =
                Bytes::from(sealer.seal(Sealed::Requests, id.as_bytes(), &encode(&*record)));
            store_written(txn, &decoded, &id, Standing::of(&stored), &record, encoded)?;
            txn.tasks.put(task_id.as_bytes(), id.as_bytes())?;
            txn.record(event.clone());
            Ok(Ok(true))
        });
        self.request_write(job, false).await
    }

    /// Changes the task of request `id` through `change`, which sees the record as stored and either
    /// changes it (its task included) and answers `Ok`, or refuses with `Err` and nothing is written.
    /// `event`, if any, is recorded with a change, never with a refusal. Returns once durable.
    pub async fn change_task<T, E>(
        &self,
        id: &RequestId,
        event: Option<NewEvent>,
        mut change: impl FnMut(&mut RequestRecord) -> Result<T, E> + Send + 'static,
    ) -> Result<Result<(Arc<RequestRecord>, T), E>, StorageError>
    where
        T: Send + 'static,
        E: Send + 'static,
    {
        let id = id.clone();
        let (decoded, intake, sealer) = (
            Arc::clone(&self.decoded_requests),
            Arc::clone(&self.decoded_intake),
            Arc::clone(&self.sealer),
        );
        let job = Queued::job(move |txn: &Txn| {
            let stored = match stored_record(txn, &decoded, &intake, &id)? {
                Ok(stored) => stored,
                Err(e) => return Ok(Err(e)),
            };
            let mut record = (*stored).clone();
            let found = match change(&mut record) {
                Ok(found) => found,
                Err(refused) => return Ok(Ok(Err(refused))),
            };
            let encoded =
                Bytes::from(sealer.seal(Sealed::Requests, id.as_bytes(), &encode(&record)));
            let record = Arc::new(record);
            store_written(txn, &decoded, &id, Standing::of(&stored), &record, encoded)?;
            if let Some(event) = &event {
                txn.record(event.clone());
            }
            Ok(Ok(Ok((record, found))))
        });
        self.request_write(job, false).await
    }

    /// Up to `limit` entries of the `tasks` index after `after` (a task id), oldest first.
    pub async fn task_entries(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<TaskEntries, StorageError> {
        let rows = match after {
            Some(after) => {
                let mut start = after.as_bytes().to_vec();
                start.push(0);
                self.group.tasks.read_range(start.., false, limit).await?
            }
            None => {
                self.group
                    .tasks
                    .read_range::<&[u8], _>(.., false, limit)
                    .await?
            }
        };
        Ok(rows
            .into_iter()
            .map(|(key, value)| {
                (
                    String::from_utf8_lossy(&key).into_owned(),
                    RequestId::from(String::from_utf8_lossy(&value).into_owned()),
                )
            })
            .collect())
    }

    /// The request of task `task_id`, from the index.
    pub async fn task_request(&self, task_id: &str) -> Result<Option<RequestId>, StorageError> {
        let found = self.group.tasks.get_async(task_id).await?;
        Ok(found.map(|value| RequestId::from(String::from_utf8_lossy(&value).into_owned())))
    }
}

/// The task of `record`, when it has one.
pub fn task_of(record: &RequestRecord) -> Option<&TaskRecord> {
    record.run.as_ref().and_then(|run| run.task.as_ref())
}
