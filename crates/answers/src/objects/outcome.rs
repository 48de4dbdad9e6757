//! What a store did with a [`Plan`](super::plan::Plan).

use serde_json::Value;

/// What came of a plan, for its answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The objects created, with their ids.
    Created(Vec<Value>),
    /// The object read.
    Found(Value),
    /// A page of the collection and how many objects it holds in all (that match).
    Listed {
        /// The page.
        items: Vec<Value>,
        /// How many in all.
        total: u64,
    },
    /// The objects as they are after the update.
    Updated(Vec<Value>),
    /// The objects an upsert wrote.
    Written(Vec<Value>),
    /// The object removed.
    Deleted(Value),
    /// The objects removed of those a request listed (the others were not there).
    Removed(Vec<Value>),
    /// The collection holds no object of this id.
    Missing(String),
}

impl Outcome {
    /// The objects it holds, to change before they are shown (a job's status).
    pub fn objects_mut(&mut self) -> std::slice::IterMut<'_, Value> {
        match self {
            Self::Created(v) | Self::Updated(v) | Self::Written(v) | Self::Removed(v) => {
                v.iter_mut()
            }
            Self::Listed { items, .. } => items.iter_mut(),
            Self::Found(o) | Self::Deleted(o) => std::slice::from_mut(o).iter_mut(),
            Self::Missing(_) => [].iter_mut(),
        }
    }
}
