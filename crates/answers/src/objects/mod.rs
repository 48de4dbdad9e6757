//! Objects a sandbox keeps: what a client writes through an operation bound to a collection
//! (its definition's `resources`), it reads back. Here are the algorithms that need no store:
//! reading the request into a [`Plan`] (`plan.rs`, the parameters as PHP reads them in
//! `params.rs`), and writing what the store did into the operation's own answer
//! (`render.rs`, paging in `page.rs`, JSON pointers in `pointer.rs`). The store is the
//! sandbox's: it applies a plan and says what came of it ([`Outcome`]).

mod cursor;
mod item;
pub mod job;
mod narrow;
mod outcome;
mod page;
mod params;
mod place;
mod plan;
mod pointer;
mod render;
mod stamp;
mod value;

pub use narrow::narrow;
pub use outcome::Outcome;
pub use params::params;
pub use place::Place;
pub use plan::{Plan, Window, plan, scope};
pub use pointer::set as set_pointer;
pub use render::{from_answer, render, seed};
