//! The seed's example, verbatim: sixty POSTs to Bitrix24 give fifty 200s plus one per refilled
//! token, then 503s exactly as the seed shows them.

use crate::support;

use std::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_posts_give_fifty_plus_refills_then_503() {
    let s = support::start(|c| c).await;
    let c = support::client();
    let url = format!("{}/b24/rest/crm.deal.fields.json", s.base);
    let t0 = Instant::now();
    let mut codes = Vec::new();
    let mut rejected = None;
    for _ in 0..60 {
        let r = c
            .post(&url)
            .header("X-Mock-Key", &s.key)
            .header("X-Mock-Delay", "0")
            .send()
            .await
            .unwrap();
        codes.push(r.status().as_u16());
        if r.status() == 503 && rejected.is_none() {
            let h = r.headers().clone();
            rejected = Some((h, r.text().await.unwrap()));
        }
    }
    let elapsed = t0.elapsed().as_secs_f64();
    let ok = codes.iter().filter(|&&c| c == 200).count();
    // The bucket holds 50 and regains one every 500 ms.
    let refills = (elapsed / 0.5).floor() as usize;
    assert!(codes[..50].iter().all(|&c| c == 200), "{codes:?}");
    assert!(
        (50..=50 + refills).contains(&ok),
        "{ok} allowed in {elapsed:.3} s: {codes:?}"
    );
    assert!(codes.iter().all(|&c| c == 200 || c == 503));
    let (headers, body) = rejected.expect("the bucket runs dry within sixty requests");
    assert_eq!(
        body,
        r#"{"error":"QUERY_LIMIT_EXCEEDED","error_description":"Too many requests"}"#
    );
    assert_eq!(headers["content-type"], "application/json; charset=utf-8");
    assert_eq!(headers["x-apistend-retry-after"], "1");
    assert_eq!(headers["x-apistend-scenario"], "rate_limit");
    assert!(
        headers.get("retry-after").is_none() && headers.get("x-ratelimit-limit").is_none(),
        "Bitrix24 sends no rate-limit headers"
    );
    eprintln!("seed: {ok} of 60 allowed in {elapsed:.3} s");
}
