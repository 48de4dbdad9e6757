//! Calls that run other calls (Bitrix24's `batch`): the source says what the commands are, what
//! call each makes (after the answers of those before it) and how their answers are put
//! together; [`run`] is the one loop, whoever answers each command — the answer sources
//! alone, or the sandbox over what it keeps.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use crate::answer::{Refusal, Success};
use crate::call::Call;

/// One command of a batch and its answer (`None`: a method the service does not have).
#[derive(Debug, Clone)]
pub struct Ran {
    /// The command's key.
    pub key: String,
    /// Its answer.
    pub answer: Option<Result<Success, Refusal>>,
}

/// How a service batches calls.
pub trait Batching: Send + Sync {
    /// The commands of `call`, by key, in order (`max` at most).
    ///
    /// # Errors
    /// The service's refusal of the batch itself (more than `max` commands).
    fn commands(&self, call: &Call, max: u32) -> Result<Vec<(String, String)>, Refusal>;

    /// The call `command` makes inside `parent`, its references to the answers of the
    /// commands before it (`ran`) resolved.
    ///
    /// # Errors
    /// The command's own refusal, before it runs (a method whose operating time is spent).
    fn call_of(&self, parent: &Call, command: &str, ran: &[Ran]) -> Result<Call, Refusal>;

    /// Whether the batch stops at the first command that fails (`halt`).
    fn halts(&self, call: &Call) -> bool;

    /// The batch's answer, from its commands'.
    fn answer(&self, ran: Vec<Ran>) -> Success;
}

/// Runs the batch `call` by `batching`, each command's call answered by `each`.
///
/// # Errors
/// The batch's own refusal.
pub async fn run<F, Fut>(
    batching: &dyn Batching,
    call: &Call,
    max: u32,
    mut each: F,
) -> Result<Success, Refusal>
where
    // A plain closure returning a future, not an async closure: the sandbox's future must be
    // `Send`, and an async closure's is not provably so for every lifetime (rustc #110338).
    F: FnMut(Call) -> Fut,
    Fut: Future<Output = Option<Result<Success, Refusal>>>,
{
    let halts = batching.halts(call);
    let mut ran: Vec<Ran> = Vec::new();
    for (key, command) in batching.commands(call, max)? {
        let answer = match batching.call_of(call, &command, &ran) {
            Ok(nested) => each(nested).await,
            Err(refusal) => Some(Err(refusal)),
        };
        let failed = !matches!(answer, Some(Ok(_)));
        ran.push(Ran { key, answer });
        if failed && halts {
            break;
        }
    }
    Ok(batching.answer(ran))
}

/// [`run`] with an `each` that never waits (the answer sources alone).
///
/// # Errors
/// The batch's own refusal.
pub fn run_now(
    batching: &dyn Batching,
    call: &Call,
    max: u32,
    mut each: impl FnMut(Call) -> Option<Result<Success, Refusal>>,
) -> Result<Success, Refusal> {
    let fut = pin!(run(batching, call, max, |c| std::future::ready(each(c))));
    // Nothing in it waits, so its first poll finishes it.
    match fut.poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(r) => r,
        Poll::Pending => Err(Refusal::BadRequest("a batch command waited".into())),
    }
}
