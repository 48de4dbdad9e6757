//! A collection a service keeps per sandbox: the objects a client creates, reads back, lists,
//! updates and deletes, as its definition declares them (`[[resources]]`, docs/services.md).
//! The definition says where each operation finds its input and puts its output; the
//! algorithms (the store, pagination, rendering over the operation's own answer) are in
//! `apistend-answers` and the sandbox.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One collection of a service (amoCRM's `leads`, MoySklad's `product`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Resource {
    /// Its name, unique within the service (`leads`): the management API's and the
    /// dashboard's name of the collection.
    pub name: String,
    /// How its ids are made and written.
    pub id: IdStyle,
    /// The answer to a read, update or delete of an id the collection does not hold (amoCRM's
    /// 204, Bitrix24's 400 `Not found`, MoySklad's 404); `{id}` in its body is the id asked for.
    /// Without it, the service's own 404.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<Missing>,
    /// Values every rendered object carries, by JSON pointer into the object: templates with
    /// `{id}` (the object's id), `{base}` (the sandbox's URL of the service, as the request
    /// addressed it) and `{parent}` (the request's path without its last segment):
    /// `"/_links/self/href" = "{base}/api/v4/leads/{id}"`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub links: BTreeMap<String, String>,
    /// Fields set to the sandbox's time when an object is created (and, for `updated`, each
    /// time it changes), by JSON pointer into the object, with their format.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stamps: Vec<Stamp>,
    /// The operations that act on it.
    pub actions: Vec<Action>,
    /// Its objects are jobs whose status moves with time (`model/job.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<super::job::Job>,
    /// Whether a sandbox's collection starts empty, instead of with its list's example items
    /// (Apify's datasets hold only what a client pushed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub starts_empty: bool,
    /// Its objects are values of any kind, each held under this field (Apify's key-value
    /// records): an upsert by a path's id writes its whole body there as it came (JSON as
    /// JSON; any other media type as its bytes, with that type), a `stored` read answers it
    /// alone, with its media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// With `value`: the field that holds the value's size in bytes, as sent (Apify's key
    /// listing shows each record's `size`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
}

/// How a collection's ids are made and written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct IdStyle {
    /// Sequential numbers or UUIDs.
    pub kind: IdKind,
    /// The first sequential id a sandbox gives (after the ids of the objects it starts with).
    #[serde(default = "one")]
    pub first: u64,
    /// The object's field that holds it (`id`; Bitrix24's `ID`).
    pub field: String,
    /// Whether a sequential id is written as a string (Bitrix24's `"ID": "5"`) rather than a
    /// number.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub text: bool,
    /// Whether the id is the store's own, never shown (Apify's dataset items have none).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
    /// For given ids: the field that names an object the client wrote without `field` (Ozon's
    /// prices and stocks, by `product_id` or else `offer_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub or: Option<String>,
}

impl IdStyle {
    /// The id of `object` as a store keys it: the text of its `field` (a string, not empty, or
    /// a number), else of its `or` field.
    pub fn key(&self, object: &serde_json::Value) -> Option<String> {
        let text = |f: &str| match object.get(f)? {
            serde_json::Value::String(s) if !s.is_empty() => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        text(&self.field).or_else(|| text(self.or.as_deref()?))
    }

    /// What names an object: its `field`, or `field` or `or`.
    pub fn names(&self) -> String {
        match &self.or {
            Some(or) => format!("{} or {or}", self.field),
            None => self.field.clone(),
        }
    }
}

fn one() -> u64 {
    1
}

/// How ids are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum IdKind {
    /// 1, 2, 3… from `first`, per sandbox; never given twice, even after a delete.
    Sequential,
    /// A random UUID (MoySklad).
    Uuid,
    /// The client's: each object's `field` as it wrote it (WB's `sku`); written by `upsert`.
    Given,
    /// 17 random letters and digits (Apify's run ids: `HG7ML7M8z78YcAPEB`).
    Random,
}

/// The answer to an id a collection does not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Missing {
    /// Its status.
    pub status: u16,
    /// Its JSON body; none (as amoCRM's 204) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

/// A field stamped with the sandbox's time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Stamp {
    /// A JSON pointer into the object (`/created_at`).
    pub at: String,
    /// Set on create only, or on every change.
    pub on: StampOn,
    /// How the time is written.
    pub format: StampFormat,
}

/// When a stamp is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StampOn {
    /// When the object is created.
    Create,
    /// When it is created and each time it is updated.
    Change,
}

/// How a time is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StampFormat {
    /// Seconds since the epoch, a number (amoCRM).
    Unix,
    /// RFC 3339 with the Moscow offset (`2026-12-05T10:00:00+03:00`, Bitrix24).
    Rfc3339,
    /// `2026-12-05 10:00:00.000` (MoySklad, Moscow time).
    Moysklad,
}

/// One operation on a collection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Action {
    /// What it does.
    pub action: ActionKind,
    /// The operation's method (`POST`).
    pub method: String,
    /// The operation's path, as its definition writes it (`/api/v4/leads/{id}`,
    /// `/rest/crm.deal.get`).
    pub path: String,
    /// Where the id it acts on is: `path:NAME` (a path parameter) or `param:NAME` (a query or
    /// body parameter, whatever its case: Bitrix24's `id` or `ID`). An update whose input is a
    /// list finds each item's id in the item instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Where the written fields are in the request's parameters (its JSON body, or its query
    /// and form fields read as PHP reads `a[b][c]`): a JSON pointer, `""` for all of them
    /// (amoCRM's array of leads, MoySklad's object or array), `/fields` for Bitrix24.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// Where the result goes in the operation's own answer (its example, whose fields fill what
    /// was never written): a JSON pointer (`""` the whole answer, `/_embedded/leads`,
    /// `/result`). Where the example has a list there, the answer has one item per object.
    #[serde(default)]
    pub at: String,
    /// What is written there.
    #[serde(default)]
    pub render: Render,
    /// How a list is paged; without it, a list is every object (that its filter asks for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<Paging>,
    /// `path:NAME`: the collection is kept apart for each value of this path parameter (WB's
    /// stocks per `warehouseId`): `stocks@507` in the management API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Where each item of a create's answer carries its place in the request, as text
    /// (amoCRM's `request_id`: `"0"`, `"1"`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
    /// Where a list's filter by ids is in the request's parameters: JSON pointers
    /// (`/filter/id`; Bitrix24's `/filter/ID`, `/filter/=ID`, `/filter/@ID`); a value there is
    /// one id or a list of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filter: Vec<String>,
    /// Where a list's filters by other fields are: request pointer → the objects' field
    /// (Ozon's `"/filter/offer_id" = "offer_id"`); a value there is one value or a list.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub filter_by: BTreeMap<String, String>,
    /// Fields of the answer's items that show another field of the object: answer field (or a
    /// JSON pointer into the item) → object field (or a JSON pointer into the object) (Ozon's
    /// product list shows the product's `id` as `product_id`; its stocks show `stock` at
    /// `/stocks/0/present`; Yandex Market's show a written `/items/0/count` at
    /// `/stocks/0/count`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
    /// A create of a job that also writes objects of another collection (`model/job.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub makes: Option<super::job::Makes>,
    /// Where each object goes inside an item of the answer's list (Yandex Market's offer
    /// mapping holds the offer at `/offer`, the example's `mapping` beside it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_at: Option<String>,
    /// Pointers removed from the answer: fields of the example a write did not earn (Yandex
    /// Market's update example lists errors).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop: Vec<String>,
    /// A create whose new object starts as the operation's own answer at `at` (Apify's run,
    /// with the actor, the storages and the options its start answers), its input over it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_answer: bool,
    /// An update's fields written on each object its `filter` lists, whatever else the
    /// request says (Ozon's archive: `is_archived = true`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<String, serde_json::Value>,
    /// A list's selection by what a request value means (Ozon's `visibility`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<super::view::View>,
    /// A delete by its `filter_by` removes only the objects holding these fields (an absent
    /// field holds `false`): Ozon deletes only archived products.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub only: BTreeMap<String, serde_json::Value>,
    /// A delete by its `filter_by`: an answer item for each value asked that named no object it
    /// could remove, with these fields (Ozon's `is_deleted = false` and its `error`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unmatched: BTreeMap<String, serde_json::Value>,
}

/// What an operation does to its collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ActionKind {
    /// Adds the objects of its input, each with a new id.
    Create,
    /// Reads one object by id.
    Read,
    /// Lists a page of the collection, in the order the objects were created.
    List,
    /// Merges its input into an object (or each object of a list of them, by their ids).
    Update,
    /// Removes an object (its `id`), or each object its `filter` lists.
    Delete,
    /// Writes each object of its input under the id it carries (a collection of given ids):
    /// a new one, or in place of the one there (WB's stocks by `sku`).
    Upsert,
    /// Stops a job (its `id`) that has not ended: from then on it shows its job's `aborted`
    /// status (Apify's `POST /v2/actor-runs/{runId}/abort`); one that has ended stays as it is.
    Abort,
}

/// What an operation's answer holds of the objects it acted on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Render {
    /// The object: the example's fields, then every stored one over them.
    #[default]
    Object,
    /// Only the fields the example shows there, with the stored values (amoCRM's create
    /// answers `id`, `request_id` and `_links`).
    Shown,
    /// The id alone (Bitrix24's `crm.deal.add` answers `"result": 42`).
    Id,
    /// The example's answer unchanged (Bitrix24's update and delete answer `true`).
    Keep,
    /// The stored object alone, nothing of the example (Apify's dataset items are the client's
    /// own JSON).
    Stored,
}

/// How a list is cut into pages, each style with the end its service documents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "style", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Paging {
    /// `limit` and `offset` parameters; the total, limit and offset written back where the
    /// answer has them (MoySklad's `meta.size`, `meta.limit`, `meta.offset`), and a link to
    /// the next page while there is one (`meta.nextHref`).
    Offset {
        /// The most items a page holds, and the default.
        max: u32,
        /// Where the total goes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<String>,
        /// Where the page's limit goes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit_at: Option<String>,
        /// Where the page's offset goes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        offset_at: Option<String>,
        /// Where the next page's URL goes; removed on the last page.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        next: Option<String>,
        /// Where the number of items on the page goes (Apify's `count`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<String>,
        /// Headers of the answer that carry the page's `total`, `offset`, `limit` and `count`
        /// (Apify's `X-Apify-Pagination-Total`…): the name of each.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        headers: BTreeMap<PageField, String>,
    },
    /// `page` (from 1) and `limit` parameters (amoCRM): the page number written back, a link to
    /// the next page only while there is one, and `empty` (204) past the end.
    Page {
        /// Items a page holds without `limit`.
        default: u32,
        /// The most `limit` may ask.
        max: u32,
        /// Where the page number goes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        page_at: Option<String>,
        /// Where the next page's URL goes; removed on the last page.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        next: Option<String>,
        /// Where this page's URL goes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        this: Option<String>,
        /// The status of a page with no items (amoCRM: 204, no body).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        empty: Option<u16>,
    },
    /// An opaque cursor the answer gives for the next page and the request sends back
    /// (Ozon's `last_id`, Yandex Market's `page_token`), with a page size parameter; on the
    /// last page the cursor is `end` (Ozon's `""`) or absent.
    Cursor {
        /// Where the request's cursor is: a JSON pointer into its parameters (`/last_id`).
        cursor: String,
        /// Where its page size is (`/limit`).
        limit: String,
        /// Items a page holds without a size.
        default: u32,
        /// The most a size may ask.
        max: u32,
        /// Where the next page's cursor goes in the answer.
        next: String,
        /// What `next` holds on the last page; without it, `next` is removed there.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        end: Option<String>,
        /// Where the total goes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<String>,
    },
    /// The id of the last item seen and a page size (WB's cards: `settings.cursor.nmID` and
    /// `limit`): the page holds the items after it; the answer carries the page's last item's
    /// id (and other fields of it, `also`) and the number of items, and the end is a page
    /// shorter than its size, as WB documents.
    After {
        /// Where the request's last id is (`/settings/cursor/nmID`); absent or unknown: none.
        after: String,
        /// Where its page size is (`/settings/cursor/limit`).
        limit: String,
        /// Items a page holds without a size.
        default: u32,
        /// The most a size may ask.
        max: u32,
        /// Where the page's last item's id goes (`/cursor/nmID`).
        next: String,
        /// Other fields of the last item written beside it: answer pointer → field
        /// (`"/cursor/updatedAt" = "updatedAt"`).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        also: BTreeMap<String, String>,
        /// Where the number of items on the page goes (WB's `/cursor/total`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<String>,
        /// Where whether more may follow goes (Apify's `isTruncated`): a full page says so;
        /// with it, `next` is null on a page that is not full.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        more: Option<String>,
        /// Where the page's size goes back (Apify's `limit`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit_at: Option<String>,
        /// Where the request's last id goes back, null without one (Apify's
        /// `exclusiveStartKey`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after_at: Option<String>,
    },
    /// A `start` parameter and pages of a fixed size (Bitrix24's 50): `next` (the next start)
    /// only while there is more, and the total.
    Start {
        /// Items a page holds.
        size: u32,
        /// Where the next start goes; removed on the last page.
        next: String,
        /// Where the total goes.
        total: String,
    },
}

/// A figure of a page, written in a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PageField {
    /// How many items match in all.
    Total,
    /// How many were skipped.
    Offset,
    /// The most a page holds.
    Limit,
    /// How many this page holds.
    Count,
}
