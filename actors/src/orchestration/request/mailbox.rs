//! What the request actor answers: its start, a supervisor's restart, and the messages of the
//! orchestrator and its step.

use actix::prelude::*;

use super::actor::{Activity, RequestActor};
use crate::orchestration::edges::Edges;
use crate::orchestration::messages::{Advance, StepCrashed, StepEnded, StopForPurge};

impl Actor for RequestActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.shared.metrics.request_actor_started();
        ctx.notify(Advance);
    }
}

impl Supervised for RequestActor {
    fn restarting(&mut self, _: &mut Context<Self>) {
        if self.purged {
            return;
        }
        tracing::warn!(parent: &self.span, "request actor restarting; reloading from the store");
        self.activity = Activity::Idle;
    }
}

impl Handler<StopForPurge> for RequestActor {
    type Result = ();

    fn handle(&mut self, _: StopForPurge, _: &mut Context<Self>) {
        tracing::info!(parent: &self.span, "request purged; its work stops");
        // Stopped, a supervised actor would be restarted for as long as its step holds its address;
        // ending instead drops the step, ignores its reports, and lets the actor go once nothing holds it.
        self.purged = true;
        self.activity = Activity::Ending;
    }
}

impl Handler<Advance> for RequestActor {
    type Result = ();

    fn handle(&mut self, _: Advance, ctx: &mut Context<Self>) {
        self.advance(ctx, None, Edges::default());
    }
}

impl Handler<StepEnded> for RequestActor {
    type Result = ();

    fn handle(&mut self, ended: StepEnded, ctx: &mut Context<Self>) {
        if matches!(&self.activity, Activity::InStep { incarnation, .. } if *incarnation == ended.incarnation)
        {
            tracing::debug!(parent: &self.span, step = %ended.key, "step ended");
            self.activity = Activity::Idle;
            self.advance(ctx, None, ended.edges);
        }
    }
}

impl Handler<StepCrashed> for RequestActor {
    type Result = ();

    fn handle(&mut self, crashed: StepCrashed, ctx: &mut Context<Self>) {
        let span = self.span.clone();
        let _entered = span.enter();
        if matches!(&self.activity, Activity::InStep { incarnation, .. } if *incarnation == crashed.incarnation)
        {
            self.fault(
                ctx,
                format!("step {} crashed: {}", crashed.key, crashed.reason),
            );
        }
    }
}
