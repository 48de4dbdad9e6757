//! Requests checked as the real services check them: each operation's path and query
//! parameters, `Content-Type`, body syntax and body schema, from its official description
//! (imported into `data/NAME-requests.pack`, compiled per operation on its first call).

mod amocrm;
mod b24;
mod check;
mod compiled;
mod contract;
mod convert;
mod import;
mod items;
mod keywords;
mod prose;
mod rules;

pub use check::Invalid;
pub use compiled::Violation;
pub use items::longer_than;
pub use keywords::Dialect;
pub use rules::RequestRules;
