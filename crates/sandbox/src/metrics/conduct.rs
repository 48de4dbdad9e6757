//! The conduct report in the metrics: gauges over the requests the journals hold when the
//! metrics are read ([`crate::journal::tally`]), by service and limit group, and the keys by
//! verdict. Gauges, not counters: a journal drops its oldest requests and can be cleared, and
//! what it no longer holds is no longer judged. Rendered as text at each scrape, so a group
//! whose requests are gone leaves no stale line.

use std::fmt::Write as _;

use super::fill::escape;
use crate::journal::Tally;
use crate::journal::tally::Counts;

/// A family: its name, its help, and the figure of a group's counts it shows.
type Family = (&'static str, &'static str, fn(&Counts) -> u64);

/// The families by service and group.
const FAMILIES: [Family; 4] = [
    (
        "apistend_conduct_requests",
        "Requests the request journals hold, by service and limit group: what the conduct report judges.",
        |c| c.requests,
    ),
    (
        "apistend_conduct_refused",
        "Of those, requests the sandbox refused (any kind).",
        |c| c.refused,
    ),
    (
        "apistend_conduct_early_retries",
        "Of those, requests sent before the wait the bucket's last refusal announced had passed.",
        |c| c.early_retries,
    ),
    (
        "apistend_conduct_retried_dead_ends",
        "Of those, requests repeated after a 401, 403 or 404 answered them.",
        |c| c.retried_dead_ends,
    ),
];

/// Appends the conduct families of `tally` to `out`.
pub(super) fn render(out: &mut String, tally: &Tally) {
    for (name, help, figure) in FAMILIES {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        for ((service, group), c) in &tally.groups {
            let (s, g) = (escape(service), escape(group));
            let _ = writeln!(out, "{name}{{service=\"{s}\",group=\"{g}\"}} {}", figure(c));
        }
    }
    let name = "apistend_conduct_keys";
    let _ = writeln!(
        out,
        "# HELP {name} Keys with requests in the journals, by the conduct report's verdict.\n# TYPE {name} gauge"
    );
    let _ = writeln!(out, "{name}{{verdict=\"clean\"}} {}", tally.clean_keys);
    let _ = writeln!(
        out,
        "{name}{{verdict=\"violations\"}} {}",
        tally.violating_keys
    );
}
