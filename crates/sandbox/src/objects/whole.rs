//! A sandbox's objects in Redis taken whole, for the management API: exported, forgotten (a
//! deleted sandbox) and replaced (a seed or a reset).

use apistend_catalog::IdStyle;
use redis::Value as R;

use super::coll::Export;
use super::collection::{first_after, key_of};
use super::error::ObjectsError;
use super::redis::{RedisObjects, dump, json, text, unavailable, wrote};

impl RedisObjects {
    pub(super) async fn export(&self, sandbox: &str) -> Result<Export, ObjectsError> {
        let reply = self
            .call(sandbox, &["export".into(), String::new()])
            .await?;
        let R::Array(colls) = reply else {
            return Err(unavailable("export: not a list"));
        };
        let mut out = Export::new();
        for c in colls {
            let R::Array(parts) = c else { continue };
            let (Some(name), Some(R::Array(order)), Some(R::Array(flat))) =
                (parts.first().and_then(text), parts.get(1), parts.get(2))
            else {
                continue;
            };
            let mut by_id = std::collections::HashMap::new();
            for pair in flat.chunks(2) {
                if let [k, v] = pair {
                    by_id.insert(text(k).unwrap_or_default(), json(v)?);
                }
            }
            let items = order
                .iter()
                .filter_map(|k| by_id.remove(&text(k)?))
                .collect();
            let (service, coll) = name.split_once('/').unwrap_or((name.as_str(), ""));
            out.entry(service.to_owned())
                .or_default()
                .insert(coll.to_owned(), items);
        }
        Ok(out)
    }

    pub(super) async fn forget(&self, sandbox: &str) -> Result<(), ObjectsError> {
        self.mirror.forget(sandbox);
        self.call(sandbox, &["forget".into(), String::new()])
            .await
            .map(drop)
    }

    pub(super) async fn replace(
        &self,
        sandbox: &str,
        data: &Export,
        ids: &(dyn Fn(&str, &str) -> Option<IdStyle> + Sync),
    ) -> Result<(), ObjectsError> {
        let mut a = vec!["replace".to_owned(), String::new()];
        let (mut objects, mut bytes) = (0u64, 0u64);
        let (mut mirrored, mut marks) = (Vec::new(), Vec::new());
        for (service, colls) in data {
            for (name, items) in colls {
                let Some(id) = ids(service, name) else {
                    continue;
                };
                a.push(format!("{service}/{name}"));
                let next = first_after(&id, items);
                a.push(next.to_string());
                marks.push((format!("{service}/{name}"), next));
                let pairs: Vec<(String, String)> = items
                    .iter()
                    .filter_map(|o| Some((key_of(&id, o)?, dump(o))))
                    .collect();
                a.push(pairs.len().to_string());
                for (k, j) in &pairs {
                    objects += 1;
                    bytes += j.len() as u64;
                    a.extend([k.clone(), j.clone()]);
                }
                mirrored.push((format!("{service}/{name}"), pairs));
            }
        }
        self.bounds.check(objects, bytes)?;
        let reply = self.call(sandbox, &a).await?;
        self.mirror.replaced(sandbox, wrote(&reply).0, mirrored);
        for (name, next) in marks {
            self.mirror.gave(sandbox, &name, next);
        }
        Ok(())
    }
}
