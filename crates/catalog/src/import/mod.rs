//! The importers (the `import` feature, which the `apistend` binary enables): they turn the
//! vendors' official descriptions into definitions' generated sections and the committed data
//! files (`apistend catalog import-…`). Nothing at run time needs them but `--wb-openapi` (a
//! newer WB description than the embedded one), which reads YAML through [`wb`].

mod generated;
mod head;

pub mod amocrm;
pub mod apify;
pub mod b24;
pub mod openapi;
pub mod wb;
pub mod ymarket;
