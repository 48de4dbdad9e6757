use super::*;
use std::path::Path;

use crate::error::SandboxError;
use crate::secret::TokenHash;
use view::hit;

#[test]
fn draws_follow_the_seed_and_the_probability() {
    let pattern = |seed| (0..1000).map(|n| hit(seed, n, 0.25)).collect::<Vec<_>>();
    assert_eq!(pattern(7), pattern(7));
    assert_ne!(pattern(7), pattern(8));
    let hits = pattern(7).iter().filter(|h| **h).count();
    assert!((200..300).contains(&hits), "{hits}");
    assert!((0..100).all(|n| !hit(3, n, 0.0) && hit(3, n, 1.0)));
}

#[test]
fn an_unrelated_change_keeps_the_sequence_a_new_setting_restarts_it() {
    let t = Tenants::in_memory();
    let s = t.create("chaos").unwrap();
    let settings = SettingsRecord {
        latency_ms: None,
        scenario: Some(ChaosRecord {
            name: "server_error".into(),
            probability: 0.5,
            seed: 1,
        }),
        ..SettingsRecord::default()
    };
    t.set_settings(&s.id, settings.clone()).unwrap();
    let first: Vec<_> = (0..20).map(|_| t.view(&s.id).unwrap().draw()).collect();
    t.add_key(&s.id, "another-key").unwrap();
    let next = t.view(&s.id).unwrap().draw();
    t.set_settings(&s.id, settings).unwrap();
    let again: Vec<_> = (0..21).map(|_| t.view(&s.id).unwrap().draw()).collect();
    assert_eq!(again[..20], first[..]);
    assert_eq!(again[20], next, "the 21st draw continued after the new key");
}

fn ids(t: &Tenants) -> Vec<String> {
    let mut v: Vec<_> = t.list().into_iter().map(|s| s.id).collect();
    v.sort();
    v
}

/// Copies every record `from` has that `to` lacks or has older, as the Redis sync does.
fn exchange(from: &Tenants, to: &Tenants) -> Vec<Touched> {
    let remote: Vec<Shared> = from
        .everything()
        .iter()
        .filter_map(|t| from.shared(t))
        .collect();
    to.merge(remote).unwrap()
}

#[test]
fn merging_keeps_every_sandbox_and_the_later_version_of_each() {
    let (a, b) = (Tenants::in_memory(), Tenants::in_memory());
    let x = a.create("x").unwrap();
    let y = b.create("y").unwrap();
    // Each learns the other's; neither loses its own.
    let back = exchange(&a, &b);
    assert_eq!(
        back,
        vec![Touched::Sandbox(y.id)],
        "b still has to publish y"
    );
    exchange(&b, &a);
    assert_eq!(ids(&a), ids(&b));
    assert_eq!(ids(&a).len(), 2);
    // A later change on b wins on a; an older copy does not undo it.
    let stale: Vec<Shared> = vec![a.shared(&Touched::Sandbox(x.id.clone())).unwrap()];
    b.add_key(&x.id, "key-added-on-b").unwrap();
    exchange(&b, &a);
    assert!(a.lookup("key-added-on-b").is_some());
    let later = a.merge(stale).unwrap();
    assert!(a.lookup("key-added-on-b").is_some(), "the older copy lost");
    assert!(
        later.contains(&Touched::Sandbox(x.id)),
        "a reports its later copy"
    );
}

#[test]
fn only_a_tombstone_removes_a_sandbox_and_a_later_edit_survives_it() {
    let (a, b) = (Tenants::in_memory(), Tenants::in_memory());
    let x = a.create("x").unwrap();
    exchange(&a, &b);
    // An empty shared state (Redis restarted empty) removes nothing.
    assert!(!b.merge(Vec::new()).unwrap().is_empty());
    assert_eq!(ids(&b), vec![x.id.clone()]);
    assert!(a.delete(&x.id).unwrap());
    exchange(&a, &b);
    assert!(b.get(&x.id).is_none(), "the tombstone reached b");
    assert!(b.lookup(&x.keys[0]).is_none());
}

#[test]
fn a_failed_write_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let t = Tenants::open(dir.path()).unwrap();
    let s = t.create("kept").unwrap();
    // The data file's place is taken by a non-empty directory: the rename that would replace it
    // fails, whoever we run as (root included).
    let file = dir.path().join(DATA_FILE);
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    std::fs::write(file.join("occupied"), b"x").unwrap();
    let result = t.add_key(&s.id, "never-stored");
    assert!(result.is_err(), "{result:?}");
    assert!(
        t.lookup("never-stored").is_none(),
        "applied although not written"
    );
    assert_eq!(t.get(&s.id).unwrap().keys, s.keys);
    assert!(t.create("neither").is_err());
    assert_eq!(t.list().len(), 1);
}

#[test]
fn a_second_holder_of_the_directory_is_refused_with_the_pid() {
    let dir = tempfile::tempdir().unwrap();
    let _first = Tenants::open(dir.path()).unwrap();
    let started = std::time::Instant::now();
    let err = Tenants::open(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains(&format!("in use by PID {}", std::process::id())),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn the_data_file_is_private_and_holds_only_the_token_hash() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let t = Tenants::open(dir.path()).unwrap();
    let token = t
        .admin_token(None)
        .unwrap()
        .expect("generated on first start");
    assert!(t.admin_matches(&token));
    let file = dir.path().join(DATA_FILE);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(&token), "the token is in the file");
    assert!(text.contains(&TokenHash::of(&token).to_hex()));
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    drop(t);
    // A restart knows the hash only: no token to show, and the old one still works.
    let t = Tenants::open(dir.path()).unwrap();
    assert_eq!(t.admin_token(None).unwrap(), None);
    assert!(t.admin_matches(&token));
    assert!(!t.admin_matches(""));
}

#[test]
fn an_empty_or_short_configured_token_is_refused() {
    let t = Tenants::in_memory();
    for bad in ["", "short"] {
        let err = t.admin_token(Some(bad)).unwrap_err().to_string();
        assert!(err.contains("admin token"), "{err}");
    }
    assert!(!t.admin_matches(""));
}

fn write_file(dir: &Path, text: &str) {
    std::fs::write(dir.join(DATA_FILE), text).unwrap();
}

#[test]
fn a_newer_unknown_or_invalid_file_is_refused_naming_the_field_and_left_untouched() {
    let sandbox = |extra: &str| {
        format!(
            r#"{{"version": 2, "sandboxes": [{{"id": "sbx_1", "name": "n", "keys": ["k1"], "created_at": "2026-01-01T00:00:00Z"{extra}}}]}}"#
        )
    };
    let cases = [
        (
            r#"{"version": 3, "sandboxes": []}"#.to_owned(),
            "version: 3",
        ),
        // A newer file with new fields is named as newer, not as unknown fields.
        (
            r#"{"version": 3, "sandboxes": [], "journal": {"max": 5}}"#.to_owned(),
            "written by a newer APIStend",
        ),
        (sandbox(r#", "colour": "red""#), "unknown field `colour`"),
        (
            sandbox(
                r#", "limits": [{"service": "wb", "group": "g", "burst": 0, "interval_us": 1000, "algorithm": "gcra"}]"#,
            ),
            "limits[0].burst",
        ),
        (
            sandbox(r#", "settings": {"latency_ms": 999999999}"#),
            "settings.latency_ms",
        ),
        (
            sandbox(
                r#", "settings": {"scenario": {"name": "server_error", "probability": 7.5, "seed": 1}}"#,
            ),
            "settings.scenario.probability",
        ),
    ];
    for (text, field) in cases {
        let dir = tempfile::tempdir().unwrap();
        write_file(dir.path(), &text);
        let err = Tenants::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains(field), "{field}: {err}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join(DATA_FILE)).unwrap(),
            text
        );
    }
}

#[test]
fn a_version_one_file_keeps_its_token_working_as_a_hash() {
    let dir = tempfile::tempdir().unwrap();
    write_file(
        dir.path(),
        r#"{"version": 1, "admin_token": "adm_0123456789abcdef0123", "sandboxes": []}"#,
    );
    let t = Tenants::open(dir.path()).unwrap();
    assert_eq!(t.admin_token(None).unwrap(), None);
    assert!(t.admin_matches("adm_0123456789abcdef0123"));
    let text = std::fs::read_to_string(dir.path().join(DATA_FILE)).unwrap();
    assert!(!text.contains("adm_0123456789abcdef0123"));
}

#[test]
fn a_change_to_a_missing_sandbox_is_its_own_kind_of_error() {
    // The management API answers it 404 from the change itself: no existence check before it
    // that a deletion in between could make wrong.
    let t = Tenants::in_memory();
    let s = t.create("x").unwrap();
    assert!(t.delete(&s.id).unwrap());
    for err in [
        t.add_key(&s.id, "k-after-delete").unwrap_err(),
        t.add_app(&s.id).unwrap_err(),
        t.set_settings(&s.id, SettingsRecord::default())
            .unwrap_err(),
    ] {
        assert!(
            matches!(err, SandboxError::NoSandbox { ref id } if *id == s.id),
            "{err}"
        );
    }
}
