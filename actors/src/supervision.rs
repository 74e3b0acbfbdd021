//! Supervision of the long-lived singleton actors (capacity scheduler, webhook dispatcher, orchestrator).
//!
//! Each runs under an actix [`actix::Supervisor`]. Their handlers run [`guarded`]: a panic inside one is
//! caught, counted (`switchboard_singleton_restarts_total{actor}`), and stops the actor's context, which the
//! supervisor restarts with the same mailbox; `Supervised::restarting` drops what was kept in memory so the
//! actor reloads it from the store. Callers holding the address never notice beyond the failed message.

use std::panic::{catch_unwind, AssertUnwindSafe};

use actix::{Actor, ActorContext, Context, Message, Supervised};

use crate::Metrics;

/// A supervised singleton actor.
pub trait Singleton: Actor<Context = Context<Self>> + Supervised {
    /// Its name in logs and in the restart counter.
    const NAME: &'static str;

    /// Where its restarts are counted.
    fn metrics(&self) -> &Metrics;
}

/// Runs `work` on the actor; if it panics, the actor is restarted by its supervisor and `None` returned.
pub fn guarded<A, R>(
    actor: &mut A,
    ctx: &mut Context<A>,
    work: impl FnOnce(&mut A, &mut Context<A>) -> R,
) -> Option<R>
where
    A: Singleton,
{
    match catch_unwind(AssertUnwindSafe(|| work(actor, ctx))) {
        Ok(result) => Some(result),
        Err(_) => {
            tracing::error!(
                actor = A::NAME,
                "actor panicked; restarting it and reloading its state from the store"
            );
            actor.metrics().singleton_restarted(A::NAME);
            ctx.stop();
            None
        }
    }
}

/// A deliberate panic inside a singleton actor (`server.fault_injection` only), to prove it is restarted.
#[derive(Clone, Copy, Debug, Message)]
#[rtype(result = "()")]
pub struct InjectPanic;

impl InjectPanic {
    /// Panics, naming the actor.
    pub fn panic(self, actor: &str) {
        panic!("fault injection: {actor} panic requested through the admin API");
    }
}

/// The address of an actor that never runs: a message sent to it fails as to a stopped actor
/// ([`actix::MailboxError::Closed`]), and one told to it is dropped. For a node that serves reads and runs
/// no work (a standby on a shared database), whose state must still name the actors the work routes use.
pub fn closed_address<A>() -> actix::Addr<A>
where
    A: actix::Actor<Context = actix::Context<A>>,
{
    use actix::AsyncContext;
    actix::Context::<A>::new().address()
}
