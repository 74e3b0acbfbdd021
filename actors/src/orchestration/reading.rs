//! Reads of the store inside an actor's handler, which cannot await. A read ready at its first poll (every
//! read on sled) is used at once, as a plain call would be. One that waits on the network (PostgreSQL)
//! makes the actor wait for it (`ctx.wait`): none of the actor's other messages runs before the answer is
//! used, as with a blocking read, but the thread runs other actors meanwhile instead of idling through the
//! round trip.

use std::future::Future;
use std::task::Poll;

use actix::{Actor, ActorFutureExt, AsyncContext, Context};

/// Runs `then` with the answer of `read`: at once when it is ready, else once it is, with nothing else of
/// the actor running in between.
pub(crate) fn read_then<A, T>(
    act: &mut A,
    ctx: &mut Context<A>,
    read: impl Future<Output = T> + 'static,
    then: impl FnOnce(&mut A, &mut Context<A>, T) + 'static,
) where
    A: Actor<Context = Context<A>>,
{
    let mut read = Box::pin(read);
    match ready_now(&mut read) {
        Some(answer) => then(act, ctx, answer),
        None => ctx.wait(
            actix::fut::wrap_future::<_, A>(read)
                .map(move |answer, act, ctx| then(act, ctx, answer)),
        ),
    }
}

/// The answer of `read` if it is ready at this poll. The waker of this poll is dropped: a read that is
/// not ready must be handed to the actor's context, which polls it again at once with its own.
pub(crate) fn ready_now<F: Future + Unpin>(read: &mut F) -> Option<F::Output> {
    let mut first = std::task::Context::from_waker(std::task::Waker::noop());
    match std::pin::Pin::new(read).poll(&mut first) {
        Poll::Ready(answer) => Some(answer),
        Poll::Pending => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Reader {
        seen: Vec<&'static str>,
    }

    impl Actor for Reader {
        type Context = Context<Self>;
    }

    #[actix::test]
    async fn a_ready_read_is_used_at_once_and_a_waiting_one_holds_the_actor_until_it_answers() {
        let addr = Reader::create(|ctx| {
            let mut reader = Reader { seen: Vec::new() };
            read_then(&mut reader, ctx, async { "ready" }, |act, _, answer| {
                act.seen.push(answer)
            });
            assert_eq!(reader.seen, ["ready"], "used before read_then returned");
            let (answer, answered) = tokio::sync::oneshot::channel::<&'static str>();
            read_then(
                &mut reader,
                ctx,
                async move { answered.await.unwrap() },
                |act, _, answer| act.seen.push(answer),
            );
            assert_eq!(reader.seen, ["ready"], "not answered yet");
            actix::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                answer.send("waited").unwrap();
            });
            reader
        });
        // A message sent meanwhile runs only after the waiting read's answer was used.
        addr.do_send(Seen("message"));
        let seen = addr.send(Report).await.unwrap();
        assert_eq!(seen, ["ready", "waited", "message"]);
    }

    #[derive(actix::Message)]
    #[rtype(result = "()")]
    struct Seen(&'static str);

    impl actix::Handler<Seen> for Reader {
        type Result = ();
        fn handle(&mut self, seen: Seen, _: &mut Context<Self>) {
            self.seen.push(seen.0);
        }
    }

    #[derive(actix::Message)]
    #[rtype(result = "Vec<&'static str>")]
    struct Report;

    impl actix::Handler<Report> for Reader {
        type Result = actix::MessageResult<Report>;
        fn handle(&mut self, _: Report, _: &mut Context<Self>) -> Self::Result {
            actix::MessageResult(self.seen.clone())
        }
    }
}
