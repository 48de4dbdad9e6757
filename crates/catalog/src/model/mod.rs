//! What a service is, as data: its operations, limit groups, credentials, rejection and headers.

mod credential;
mod ids;
mod job;
mod json;
mod limits;
mod operation;
mod requirement;
mod resource;
mod responses;
mod service;
mod token;
mod view;

pub use credential::CredentialChannel;
pub use ids::{Method, ServiceId, short_host};
pub use job::{Aborted, Job, JobEnd, Makes};
pub use json::JsonReading;
pub use limits::{BucketScope, InFlightLimit, LimitGroup, Lockout, OperatingBudget, Plan};
pub use operation::{Binding, Fixture, Operation};
pub use requirement::HeaderRequirement;
pub use resource::{
    Action, ActionKind, IdKind, IdStyle, Missing, PageField, Paging, Render, Resource, Stamp,
    StampFormat, StampOn,
};
pub use responses::{AnswerSource, ErrorStyle, InFlightRefusal, MarkerValue, Rejection};
pub use service::{LatencyProfile, Service};
pub use token::TokenEndpoint;
pub use view::View;
