//! Answer sources: one implementation per [`AnswerSource`] a definition can name. The pipeline
//! asks the source of the request's service and never branches on the service itself.

use apistend_catalog::{AnswerSource, Operation, Service};

use crate::answer::{Refusal, Success};
use crate::batch::Batching;
use crate::call::Call;
use crate::error::AnswersError;
use crate::{apify, b24, ozon, wb};

/// What a successful call of an operation returns.
pub trait Answers: Send + Sync {
    /// The answer of `op` for `call`; `None` for an operation this source does not know (the
    /// service's 404).
    fn answer(
        &self,
        service: &Service,
        op: &Operation,
        call: &Call,
    ) -> Option<Result<Success, Refusal>>;

    /// The methods `call` runs inside it (a Bitrix24 `batch`), for the operating-time budget.
    fn nested(&self, _call: &Call) -> Vec<String> {
        Vec::new()
    }

    /// How `call` runs other calls, when it is a batch.
    fn batching(&self, _call: &Call) -> Option<&dyn Batching> {
        None
    }
}

/// The implementation of `source`. What it gives no answer of its own, the service's embedded
/// OpenAPI examples (its definition's `examples`) answer.
///
/// # Errors
/// When an embedded answers file is corrupt (a build problem).
pub fn source_of(source: AnswerSource) -> Result<Box<dyn Answers>, AnswersError> {
    Ok(match source {
        AnswerSource::OpenApiExamples => Box::new(OpenApi),
        AnswerSource::B24Methods => {
            Box::new(B24Methods(crate::b24_methods::B24Methods::embedded()?))
        }
        AnswerSource::ApifyResources => Box::new(ApifyResources),
        AnswerSource::OzonFixtures => Box::new(OzonFixtures),
        AnswerSource::Fixtures => Box::new(Fixtures),
        _ => Box::new(Nothing),
    })
}

/// Everything from the examples, but for the answers that depend on the request (WB's `/ping`).
struct OpenApi;

impl Answers for OpenApi {
    fn answer(&self, _: &Service, op: &Operation, _: &Call) -> Option<Result<Success, Refusal>> {
        wb::answer(op).map(Ok)
    }
}

/// Bitrix24: the methods whose answer depends on the request, then every documented method's
/// example.
struct B24Methods(crate::b24_methods::B24Methods);

impl Answers for B24Methods {
    fn answer(
        &self,
        service: &Service,
        _: &Operation,
        call: &Call,
    ) -> Option<Result<Success, Refusal>> {
        let method = call.rpc_method.as_deref()?;
        b24::answer(method, call, service.batch_max.unwrap_or(50), &self.0)
    }

    fn batching(&self, call: &Call) -> Option<&dyn Batching> {
        (call.rpc_method.as_deref() == Some("batch")).then_some(&b24::Batch)
    }

    fn nested(&self, call: &Call) -> Vec<String> {
        if call.rpc_method.as_deref() != Some("batch") {
            return Vec::new();
        }
        b24::batch_commands(call)
            .into_iter()
            .map(|(_, cmd)| {
                let m = cmd.split_once('?').map_or(cmd.as_str(), |(m, _)| m);
                m.to_ascii_lowercase()
            })
            .collect()
    }
}

/// Apify: the answers that depend on the request (its examples answer the rest).
struct ApifyResources;

impl Answers for ApifyResources {
    fn answer(&self, _: &Service, op: &Operation, call: &Call) -> Option<Result<Success, Refusal>> {
        apify::answer(op, call).map(Ok)
    }
}

struct OzonFixtures;

impl Answers for OzonFixtures {
    fn answer(&self, _: &Service, op: &Operation, _: &Call) -> Option<Result<Success, Refusal>> {
        Some(Ok(ozon::answer(op)))
    }
}

/// The answers written in the definition, one per operation.
struct Fixtures;

impl Answers for Fixtures {
    fn answer(&self, _: &Service, op: &Operation, _: &Call) -> Option<Result<Success, Refusal>> {
        let f = op.fixture.as_ref()?;
        let mut s = Success::new(f.status, f.body.clone());
        s.media.clone_from(&f.media);
        Some(Ok(s))
    }
}

/// A source this build does not implement: every operation is the service's 404.
struct Nothing;

impl Answers for Nothing {
    fn answer(&self, _: &Service, _: &Operation, _: &Call) -> Option<Result<Success, Refusal>> {
        None
    }
}
