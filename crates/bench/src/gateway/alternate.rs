//! Two ways of sending the same request to one sandbox, measured in alternating rounds (which
//! goes first alternates too, so neither always runs on a warmer machine): the posted and kept
//! runs.

use super::config::Config;
use crate::wrk::Load;

/// One way of sending: its name and headers.
pub(super) type Way<'a> = (&'a str, &'a [(String, String)]);

/// `config.rounds` rounds of `a` and `b` on `url` (with `body`, if any), each answered with
/// 2xx only; per round, `a`'s load and `b`'s.
///
/// # Errors
/// When wrk fails, or an answer is not a 2xx.
pub(super) fn rounds(
    config: &Config,
    what: &str,
    url: &str,
    body: Option<&str>,
    a: Way<'_>,
    b: Way<'_>,
) -> anyhow::Result<Vec<(Load, Load)>> {
    let run = |(name, h): Way<'_>| -> anyhow::Result<Load> {
        let load = config.wrk.run_posting(url, h, body)?;
        anyhow::ensure!(
            load.non_2xx == 0 && load.socket_errors == 0,
            "{name}: {} non-2xx, {} socket errors",
            load.non_2xx,
            load.socket_errors
        );
        eprintln!(
            "  {name:<9} {:>9.0} req/s  p50 {:>6.0} µs  p99 {:>6.0} µs",
            load.rps, load.p50_us, load.p99_us
        );
        Ok(load)
    };
    config.wrk.warm_up().run_posting(url, a.1, body)?;
    let mut out = Vec::with_capacity(config.rounds);
    for i in 0..config.rounds {
        eprintln!("{what} round {}/{}", i + 1, config.rounds);
        out.push(if i % 2 == 0 {
            let first = run(a)?;
            (first, run(b)?)
        } else {
            let second = run(b)?;
            (run(a)?, second)
        });
    }
    Ok(out)
}
