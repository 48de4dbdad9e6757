//! The credential index: every key and Bitrix24 application token of every sandbox, mapped to
//! its owner and its sandbox's view.

use foldhash::HashMap;
use std::sync::Arc;

use super::records::DataFile;
use super::view::View;

/// Who a credential belongs to, with its sandbox's view.
#[derive(Debug, Clone)]
pub(crate) enum Principal {
    /// A sandbox key.
    Key { key: Arc<str>, view: Arc<View> },
    /// A Bitrix24 local application.
    App { app: Arc<str>, view: Arc<View> },
}

/// The data and what is looked up in it.
#[derive(Debug, Default)]
pub(super) struct Index {
    pub(super) data: DataFile,
    pub(super) by_credential: HashMap<String, Principal>,
    /// sandbox → its view.
    pub(super) views: HashMap<String, Arc<View>>,
}

impl Index {
    /// Indexes `data`; `previous` views pass on their chaos draw counts.
    pub(super) fn rebuild(data: DataFile, previous: &HashMap<String, Arc<View>>) -> Self {
        let mut by_credential = HashMap::default();
        let mut views = HashMap::default();
        for s in &data.sandboxes {
            let view = Arc::new(View::new(s, previous.get(&s.id).map(AsRef::as_ref)));
            for k in &s.keys {
                let principal = Principal::Key {
                    key: k.as_str().into(),
                    view: Arc::clone(&view),
                };
                by_credential.insert(k.clone(), principal);
            }
            for a in &s.b24_apps {
                let principal = Principal::App {
                    app: a.id.as_str().into(),
                    view: Arc::clone(&view),
                };
                by_credential.insert(a.token.clone(), principal);
            }
            views.insert(s.id.clone(), view);
        }
        Self {
            data,
            by_credential,
            views,
        }
    }
}
