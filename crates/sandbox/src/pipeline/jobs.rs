//! Jobs in a sandbox (a collection whose definition has a `job`): a create stamps each new
//! job with when it starts, how long it takes and whether it fails — the sandbox's choice for
//! that collection (`settings.jobs`), or the request's (`X-Mock-Job`) — and first writes the
//! objects it makes (an Ozon import's products); a job is shown with the status it has at the
//! moment it is read, or its last one once the sandbox finished its jobs.

use apistend_answers::Refusal;
use apistend_answers::call::Call;
use apistend_answers::objects::job::{self, Moment, Timing};
use apistend_answers::objects::{self, Outcome, Plan, Window};
use apistend_catalog::{Action, Job, Makes, Resource};
use serde_json::{Map, Value};

use super::objects::{Failure, Kept};

impl Kept<'_> {
    /// Stamps the jobs of a create (`new`, objects of `resource` through `action`), after
    /// writing what each makes; `now` stamps those objects (Unix seconds).
    pub(super) async fn start_jobs(
        &self,
        resource: &Resource,
        action: &Action,
        job: &Job,
        call: &Call,
        new: &mut [Map<String, Value>],
        now: i64,
    ) -> Result<(), Failure> {
        let made = match &action.makes {
            Some(m) => Some((m, self.make(m, call, now).await?)),
            None => None,
        };
        let chosen = self.view.job(self.service.id.as_str(), &resource.name);
        let timing = Timing {
            from_ms: apistend_answers::clock::unix_now_ms(),
            ms: chosen.and_then(|c| c.ms).unwrap_or(job.ms),
            fails: self.fails.or(chosen.map(|c| c.fails)).unwrap_or(false),
        };
        for o in new.iter_mut() {
            if let Some((m, made)) = &made {
                job::list_made(o, m, made);
            }
            job::start(job, o, timing);
        }
        Ok(())
    }

    /// Writes the objects `makes` of `call`'s parameters into their collection: each updates
    /// the object of its key's value, or is added. Answers them, in the request's order.
    async fn make(&self, makes: &Makes, call: &Call, now: i64) -> Result<Vec<Value>, Failure> {
        let resources = &self.service.resources;
        let Some(name) = &makes.resource else {
            // Nothing to write: the job lists the request's items themselves.
            let items = match objects::params(call).pointer(&makes.input) {
                Some(Value::Array(list)) => list.clone(),
                Some(one @ Value::Object(_)) => vec![one.clone()],
                _ => Vec::new(),
            };
            return Ok(items);
        };
        let Some((at, target)) = resources.iter().enumerate().find(|(_, r)| &r.name == name) else {
            return Err(Failure::Refused(Refusal::NotFound));
        };
        let first = self.first(at);
        let held = match &makes.key {
            Some(_) => {
                let all = Plan::List(Window::all());
                match self.apply(&target.name, target, &all, first).await? {
                    Outcome::Listed { items, .. } => items,
                    _ => Vec::new(),
                }
            }
            None => Vec::new(),
        };
        let m = job::making(target, makes, &objects::params(call), &held, now);
        let mut updated = Vec::new();
        if !m.updates.is_empty() {
            let plan = Plan::Update(m.updates);
            // An object removed since it was listed leaves its item out.
            if let Outcome::Updated(v) = self.apply(&target.name, target, &plan, first).await? {
                updated = v;
            }
        }
        let mut created = Vec::new();
        if !m.creates.is_empty() {
            let plan = Plan::Create(m.creates);
            if let Outcome::Created(v) = self.apply(&target.name, target, &plan, first).await? {
                created = v;
            }
        }
        Ok(m.order
            .iter()
            .filter_map(|o| match o {
                Ok(i) => updated.get(*i).cloned(),
                Err(i) => created.get(*i).cloned(),
            })
            .collect())
    }

    /// Holds a request that asks to wait for its job (the job's `wait` parameter, seconds, at
    /// most `wait_max`) until that job is done or the wait is over.
    pub(super) async fn wait_for(&self, job: &Job, outcome: &Outcome, call: &Call) {
        let Some(at) = &job.wait else { return };
        let asked = objects::params(call)
            .pointer(at)
            .and_then(|v| match v {
                Value::String(s) => s.trim().parse::<f64>().ok(),
                other => other.as_f64(),
            })
            .filter(|s| s.is_finite() && *s > 0.0);
        let Some(secs) = asked else { return };
        let moment = self.moment();
        let left = match outcome {
            Outcome::Found(o) => job::remaining_ms(o, moment),
            Outcome::Created(v) | Outcome::Updated(v) => v
                .iter()
                .map(|o| job::remaining_ms(o, moment))
                .max()
                .unwrap_or(0),
            _ => 0,
        };
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // ≤ wait_max seconds
        let most = (secs.min(job.wait_max as f64) * 1000.0) as u64;
        let wait = left.min(most);
        if wait > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
        }
    }

    /// The moment jobs are seen at: now, and the sandbox's mark.
    fn moment(&self) -> Moment {
        Moment {
            now_ms: apistend_answers::clock::unix_now_ms(),
            finished: self.view.jobs_finished_ms,
        }
    }

    /// Each job of `outcome` with the status it has now; `base` is the service's URL.
    pub(super) fn show_jobs(
        &self,
        job: &Job,
        resource: &Resource,
        outcome: &mut Outcome,
        base: &str,
    ) {
        let moment = self.moment();
        for o in outcome.objects_mut() {
            let id = resource.id.key(o).unwrap_or_default();
            job::show(job, o, moment, base, &id);
        }
    }
}
