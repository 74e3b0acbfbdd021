//! Redelivery: the admin API's "send this webhook again now", outside the rounds, after any round of the
//! same delivery has ended.

use actix::prelude::*;
use switchboard_storage::audit::NewEvent;
use switchboard_storage::{DeliveryRecord, RequestId, StorageError};
use tokio::sync::oneshot;

use super::{RoundEnded, WebhookDispatcher, ROUND_WAIT};

/// Sent by the admin API: send a terminal request's webhook again now, outside its rounds. The reply comes
/// once the redelivery is durable (it then survives a crash and is sent once); the send follows at once.
/// `event` is the audit event of the call, written with it.
#[derive(Message)]
#[rtype(result = "Result<Redelivery, StorageError>")]
pub struct Redeliver {
    /// The request whose webhook is sent again.
    pub request_id: RequestId,
    /// The call's audit event.
    pub event: NewEvent,
}

/// What became of a [`Redeliver`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redelivery {
    /// Stored and being sent.
    Accepted,
    /// The request has no delivery: not terminal yet, no webhook URL, or gone.
    NoDelivery,
    /// A round of the same delivery has been running for longer than a redelivery waits for it.
    RoundRunning,
}

impl Handler<Redeliver> for WebhookDispatcher {
    type Result = ResponseFuture<Result<Redelivery, StorageError>>;

    fn handle(&mut self, redeliver: Redeliver, ctx: &mut Context<Self>) -> Self::Result {
        // A round of the same delivery is running, and would save over the mark: the redelivery is
        // asked for again once that round has ended (the log can show its outcome a moment before).
        if self.in_flight.contains(&redeliver.request_id) {
            let (ended, wait) = oneshot::channel();
            self.after_round
                .entry(redeliver.request_id.clone())
                .or_default()
                .push(ended);
            let me = ctx.address();
            return Box::pin(async move {
                match tokio::time::timeout(ROUND_WAIT, wait).await {
                    // Dropped unanswered only when the dispatcher stops; asking again then fails as a
                    // stop.
                    Ok(_) => me.send(redeliver).await.map_err(|_| StorageError::Closed)?,
                    Err(_) => Ok(Redelivery::RoundRunning),
                }
            });
        }
        // Marked in flight before anything is read or written, so no round of the same delivery starts
        // (and saves over the mark) before the send; a request without a delivery is unmarked again.
        self.in_flight.insert(redeliver.request_id.clone());
        let (store, now, me) = (self.store.clone(), self.clock.now(), ctx.address());
        Box::pin(async move {
            let Redeliver { request_id, event } = redeliver;
            match store.request_redelivery(&request_id, now, event).await {
                Ok(Some(marked)) => {
                    me.do_send(RunRedelivery { delivery: marked });
                    Ok(Redelivery::Accepted)
                }
                outcome => {
                    me.do_send(RoundEnded { request_id });
                    outcome.map(|_| Redelivery::NoDelivery)
                }
            }
        })
    }
}

/// A redelivery is durable: its send starts (the delivery is already in flight).
#[derive(Message)]
#[rtype(result = "()")]
struct RunRedelivery {
    delivery: DeliveryRecord,
}

impl Handler<RunRedelivery> for WebhookDispatcher {
    type Result = ();

    fn handle(&mut self, run: RunRedelivery, ctx: &mut Context<Self>) {
        let gate = self.destination(&run.delivery.url);
        self.spawn_round(ctx, gate, run.delivery);
    }
}
