//! What the emulated services answer, apart from the gateway that serves it: each service's
//! answer source (a definition names one), the examples of its official OpenAPI description
//! (imported, embedded, and built from schemas where a description has none), and the request
//! as a source reads it ([`Call`]). No HTTP server here: the sandbox asks, and puts the answer
//! on the wire.
//!
//! ```
//! use apistend_answers::SpecAnswers;
//! let wb = SpecAnswers::embedded("wb")?;
//! assert!(wb.len() > 290);
//! # Ok::<(), apistend_answers::AnswersError>(())
//! ```

mod answer;
mod apify;
mod b24;
mod b24_methods;
pub mod batch;
pub mod call;
pub mod clock;
mod error;
mod examples;
mod media;
pub mod objects;
mod openapi;
mod ozon;
mod pack;
pub mod requests;
mod samples;
mod schema_values;
mod source;
mod spec_answers;
mod wb;

pub use answer::{Refusal, Success};
pub use b24_methods::B24Methods;
pub use call::Call;
pub use error::AnswersError;
pub use examples::of_catalog as examples_of_catalog;
pub use requests::{Invalid, RequestRules};
pub use samples::file as sample_file;
pub use source::{Answers, source_of};
pub use spec_answers::SpecAnswers;
