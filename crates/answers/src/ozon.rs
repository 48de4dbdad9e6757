//! Ozon Seller API: products, stocks, warehouses.

use apistend_catalog::Operation;
use serde_json::json;

use crate::answer::Success;

/// The answer of `op`.
pub(crate) fn answer(op: &Operation) -> Success {
    let body = match op.path.as_str() {
        "/v3/product/list" => json!({"result": {"items": [
            {"product_id": 223681945, "offer_id": "item-1", "has_fbo_stocks": true, "has_fbs_stocks": true, "archived": false, "is_discounted": false, "quants": []},
            {"product_id": 223681946, "offer_id": "item-2", "has_fbo_stocks": false, "has_fbs_stocks": true, "archived": false, "is_discounted": false, "quants": []}
        ], "total": 2, "last_id": ""}}),
        "/v3/product/info/list" => json!({"items": [
            {"id": 223681945, "offer_id": "item-1", "name": "Товар 1", "currency_code": "RUB", "price": "1000.0000", "old_price": "1200.0000", "is_archived": false}
        ]}),
        "/v4/product/info/stocks" => json!({"items": [
            {"product_id": 223681945, "offer_id": "item-1", "stocks": [{"type": "fbs", "present": 10, "reserved": 1, "shipment_type": "SHIPMENT_TYPE_GENERAL", "sku": 1234567}]}
        ], "total": 1, "cursor": ""}),
        "/v2/products/stocks" => {
            json!({"result": [{"warehouse_id": 22_142_605_386_000_u64, "product_id": 223681945, "offer_id": "item-1", "updated": true, "errors": []}]})
        }
        "/v1/warehouse/list" => {
            json!({"result": [{"warehouse_id": 22_142_605_386_000_u64, "name": "Склад APIStend", "is_rfbs": false, "status": "created", "has_entrusted_acceptance": false}]})
        }
        "/v4/product/info/limit" => {
            json!({"daily_create": {"usage": 0, "limit": 1500, "reset_at": "2026-12-01T00:00:00Z"},
                                           "daily_update": {"usage": 4, "limit": 5000, "reset_at": "2026-12-01T00:00:00Z"},
                                           "total": {"usage": 2, "limit": 20000}})
        }
        _ => json!({"result": {}}),
    };
    Success::ok(body)
}
