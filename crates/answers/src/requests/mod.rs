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
mod keywords;
mod prose;
mod rules;

pub use check::Invalid;
pub use compiled::Violation;
pub use keywords::Dialect;
pub use rules::RequestRules;
