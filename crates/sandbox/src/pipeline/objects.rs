//! Stage 10 for a service that keeps objects (its definition's `resources`): an operation bound
//! to a collection reads the request into a plan, applies it to the sandbox's objects, and
//! writes the outcome over the answer the operation gives without state (its example fills what
//! was never written); a batch runs each of its commands the same way, in order, so that one
//! command reads what an earlier one wrote.

use apistend_answers::call::Call;
use apistend_answers::objects::{self, Outcome, Place, Plan};
use apistend_answers::{Refusal, Success};
use apistend_catalog::{Binding, ErrorKind, Operation, Resolved, Resource, Service};
use axum::body::Body;
use http::Response;
use http::request::Parts;
use serde_json::Value;

use super::answer::Answer;
use super::limit::Admitted;
use super::meta::Meta;
use super::respond::{self, static_answer};
use crate::controls::Controls;
use crate::objects::{Coll, ObjectsError};
use crate::state::AppState;

/// Where the request came from, for the links its answer carries.
pub(super) struct Origin<'a> {
    /// The request's head.
    pub(super) parts: &'a Parts,
    /// Bytes of its path before the service's own path (the service's prefix).
    pub(super) prefix: usize,
    /// Whether it addressed the service by hostname.
    pub(super) by_host: bool,
}

impl Origin<'_> {
    /// The service's URL as the request addressed it: `http://127.0.0.1:8080/amocrm`, or
    /// `https://example.amocrm.ru` by hostname.
    fn base(&self) -> String {
        let host = apistend_answers::call::header(&self.parts.headers, http::header::HOST)
            .or_else(|| self.parts.uri.authority().map(http::uri::Authority::as_str))
            .unwrap_or("localhost");
        let scheme = if self.by_host { "https" } else { "http" };
        let prefix = self.parts.uri.path().get(..self.prefix).unwrap_or("");
        format!("{scheme}://{host}{prefix}")
    }
}

/// What a request wants of the objects a sandbox keeps.
#[derive(Debug, Clone, Copy)]
pub(super) struct Wanted {
    /// What the sandbox keeps (`X-Mock-State`: `on`, the default), or the operation's example,
    /// as if nothing were kept (`off`).
    pub(super) kept: bool,
    /// Whether the job it starts fails (`X-Mock-Job`), when it says.
    pub(super) fails: Option<bool>,
}

/// What the request wants of the objects the sandbox keeps.
///
/// # Errors
/// The service's 400 for a value of `X-Mock-State` or `X-Mock-Job` it does not take.
pub(super) fn wanted(
    controls: &Controls,
    admitted: &Admitted<'_>,
) -> Result<Wanted, Response<Body>> {
    let refuse = |why| admitted.refuse(&ErrorKind::BadRequest(why));
    Ok(Wanted {
        kept: controls.stateful().map_err(refuse)?,
        fails: controls.job_fails().map_err(refuse)?,
    })
}

/// One request in a sandbox, for a service that keeps objects.
pub(super) struct Kept<'a> {
    pub(super) state: &'a AppState,
    pub(super) service: &'a Service,
    /// The service's index in the catalog.
    pub(super) index: usize,
    /// The sandbox.
    pub(super) view: &'a crate::tenants::View,
    pub(super) origin: Origin<'a>,
    /// Whether the job the request starts fails, when it says.
    pub(super) fails: Option<bool>,
}

/// Why a kept answer is not a success.
pub(super) enum Failure {
    /// The service's own refusal.
    Refused(Refusal),
    /// The sandbox's: over its bound (507), its store away (503).
    Store(ObjectsError),
}

impl<'a> Kept<'a> {
    /// A request's work on the objects of its sandbox (`view`), when it wants it and
    /// `service` keeps some.
    pub(super) fn of(
        state: &'a AppState,
        service: &'a Service,
        index: usize,
        view: Option<&'a crate::tenants::View>,
        origin: Origin<'a>,
        wanted: Wanted,
    ) -> Option<Self> {
        let view = view.filter(|_| wanted.kept && !service.resources.is_empty())?;
        Some(Self {
            state,
            service,
            index,
            view,
            origin,
            fails: wanted.fails,
        })
    }
    /// The answer to `call` (of `resolved`): over what the sandbox keeps where its operation is
    /// bound to a collection, else the stateless answer (a batch is `batch.rs`'s).
    pub(super) async fn answer(
        &self,
        resolved: &Resolved<'_>,
        call: &Call,
        meta: &Meta,
        limit: u32,
    ) -> Answer {
        let (service, ctx) = (self.service, || meta.ctx(limit));
        let (op, binding) = match resolved.operation {
            Some(
                op @ Operation {
                    binding: Some(b), ..
                },
            ) => (op, *b),
            _ => return respond::answer(self.state, service, resolved, call, meta, limit),
        };
        match self.kept(op, binding, call).await {
            Ok(s) => Answer::success(s, service.content_type),
            Err(Failure::Refused(r)) => Answer::refusal(service, r, &ctx()),
            Err(Failure::Store(e @ ObjectsError::Full { .. })) => {
                Answer::problem(507, "Insufficient Storage", &e.to_string())
            }
            Err(Failure::Store(e)) => Answer::problem(503, "Service Unavailable", &e.to_string()),
        }
    }

    /// The answer of a batch's command of `op`, bound by `binding`: a store's failure is the
    /// command's error, not the batch's.
    pub(super) async fn command(
        &self,
        op: &Operation,
        binding: Binding,
        call: &Call,
    ) -> Result<Success, Refusal> {
        self.kept(op, binding, call).await.map_err(|f| match f {
            Failure::Refused(r) => r,
            Failure::Store(e) => Refusal::Body {
                status: 507,
                body: serde_json::json!({"error": "INTERNAL_SERVER_ERROR", "error_description": e.to_string()}),
                media: None,
            },
        })
    }

    /// The answer of `op`, bound by `binding`, to `call`.
    async fn kept(
        &self,
        op: &Operation,
        binding: Binding,
        call: &Call,
    ) -> Result<Success, Failure> {
        let (state, service) = (self.state, self.service);
        let Some((resource, action)) = service
            .resources
            .get(binding.resource)
            .and_then(|r| Some((r, r.actions.get(binding.action)?)))
        else {
            return Err(Failure::Refused(Refusal::NotFound));
        };
        let now = self.now();
        let mut plan = objects::plan(resource, action, op, call, now).map_err(Failure::Refused)?;
        let mut template = match static_answer(state, service, self.index, op, call) {
            Some(Ok(s)) => s,
            _ => Success::ok(Value::Object(serde_json::Map::new())),
        };
        if let Plan::Create(new) = &mut plan {
            if action.from_answer {
                // Parsed once: render writes into the body it finds here.
                template.body = template.take_json();
                objects::from_answer(action, &template.body, new);
            }
            if let Some(job) = &resource.job {
                self.start_jobs(resource, action, job, call, new, now)
                    .await?;
            }
        }
        let first = self.first(binding.resource);
        let name = match objects::scope(action, op, call) {
            Some(part) => format!("{}@{part}", resource.name),
            None => resource.name.clone(),
        };
        let mut outcome = self.apply(&name, resource, &plan, first).await?;
        let base = self.origin.base();
        if let Some(job) = &resource.job {
            self.wait_for(job, &outcome, call).await;
            self.show_jobs(job, resource, &mut outcome, &base);
        }
        let place = Place {
            service,
            base: &base,
            path: &call.path,
            query: &call.query,
        };
        objects::render(
            resource,
            action,
            template,
            &plan,
            outcome,
            &place,
            first.first(),
        )
        .map_err(Failure::Refused)
    }

    /// The time the sandbox stamps objects with: its own, or the clock's (Unix seconds).
    fn now(&self) -> i64 {
        #[allow(clippy::cast_possible_truncation)] // seconds since 1970 fit an i64
        self.view
            .object_time
            .unwrap_or_else(|| apistend_answers::clock::unix_now() as i64)
    }

    /// The objects the service's resource at `index` starts with in every sandbox.
    pub(super) fn first(&self, index: usize) -> &[Value] {
        let (state, service) = (self.state, self.service);
        match state.emulated(self.index) {
            Some(e) => e.seed(index, || first_objects(state, service, self.index, index)),
            None => &[],
        }
    }

    /// `plan` applied to the sandbox's collection `name` of `resource`, which starts with
    /// `first`.
    pub(super) async fn apply(
        &self,
        name: &str,
        resource: &Resource,
        plan: &Plan,
        first: &[Value],
    ) -> Result<Outcome, Failure> {
        let coll = Coll {
            sandbox: &self.view.sandbox,
            service: self.service.id.as_str(),
            name,
        };
        let seed = || first.to_vec();
        self.state
            .objects
            .apply(coll, &resource.id, plan, &seed)
            .await
            .map_err(Failure::Store)
    }
}

/// The objects the resource at `resource` starts with: the items of its first list
/// operation's stateless answer.
fn first_objects(state: &AppState, service: &Service, index: usize, resource: usize) -> Vec<Value> {
    let Some(res) = service.resources.get(resource).filter(|r| !r.starts_empty) else {
        return Vec::new();
    };
    let list = res
        .actions
        .iter()
        .position(|a| a.action == apistend_catalog::ActionKind::List);
    let Some((a, action)) = list.and_then(|a| Some((a, res.actions.get(a)?))) else {
        return Vec::new();
    };
    let Some(op) = service.operations.iter().find(|o| {
        o.binding
            .is_some_and(|b| b.resource == resource && b.action == a)
    }) else {
        return Vec::new();
    };
    let Ok(req) = http::Request::builder()
        .method(op.method.as_str())
        .uri(&op.path)
        .body(())
    else {
        return Vec::new();
    };
    let (parts, ()) = req.into_parts();
    let call = Call::parse(service, &parts, &op.path, b"", None);
    match static_answer(state, service, index, op, &call) {
        Some(Ok(s)) => objects::seed(action, s),
        _ => Vec::new(),
    }
}
