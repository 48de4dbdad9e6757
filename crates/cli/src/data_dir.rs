//! Where `apistend serve` and `apistend ca` keep their files (the data file, its lock, the local
//! authority's certificate and private key): `--data DIR` (`APISTEND_DATA`), else the user's
//! data directory — `$XDG_DATA_HOME/apistend`, or `~/.local/share/apistend` — never the working
//! directory, which is often a checkout where a private key must not land. Both commands resolve
//! it here, so `apistend ca` finds the authority `serve` made wherever it is run from.
//!
//! An older version wrote into the working directory. Files found there are still used when no
//! `--data` is given, with a warning that says how to move them: nothing is silently lost.

use std::path::{Path, PathBuf};

use anyhow::bail;
use apistend_sandbox::DATA_FILE;
use apistend_sandbox::tls::{CA_CERT_FILE, CA_KEY_FILE};
use clap::Args;

/// `--data`, shared by the commands that keep files.
#[derive(Debug, Clone, Args)]
pub(crate) struct DataArg {
    /// Directory of the data file (sandboxes and keys) and, unless --ca-dir says otherwise, the
    /// local certificate authority. Default: $XDG_DATA_HOME/apistend, or
    /// ~/.local/share/apistend.
    #[arg(long = "data", env = "APISTEND_DATA")]
    data: Option<PathBuf>,
}

/// The files an older version left in the working directory.
const LEGACY: [&str; 3] = [DATA_FILE, CA_KEY_FILE, CA_CERT_FILE];

impl DataArg {
    /// The data directory, and a warning to show when it is the working directory of an older
    /// version.
    ///
    /// # Errors
    /// No `--data` and no home directory to put the default in.
    pub(crate) fn resolve(&self) -> anyhow::Result<(PathBuf, Option<String>)> {
        if let Some(dir) = &self.data {
            return Ok((dir.clone(), None));
        }
        let default = default_dir(
            std::env::var_os("XDG_DATA_HOME").map(PathBuf::from),
            std::env::var_os("HOME").map(PathBuf::from),
        );
        let here = Path::new(".");
        if let Some(old) = legacy_files(here) {
            let to = default
                .as_ref()
                .map_or_else(|| "--data DIR".to_owned(), |d| d.display().to_string());
            let warning = format!(
                "using {} in the working directory, where an older APIStend kept its files; \
                 move them to the default data directory (mkdir -p {to} && mv {} {to}/) or \
                 name this directory with --data to silence this",
                old.join(", "),
                old.join(" "),
            );
            return Ok((here.to_owned(), Some(warning)));
        }
        match default {
            Some(dir) => Ok((dir, None)),
            None => bail!("no home directory for the default data directory: give --data DIR"),
        }
    }
}

/// `$XDG_DATA_HOME/apistend`, else `$HOME/.local/share/apistend` (an empty or relative
/// `XDG_DATA_HOME` is ignored, as the XDG Base Directory specification says).
fn default_dir(xdg_data_home: Option<PathBuf>, home: Option<PathBuf>) -> Option<PathBuf> {
    xdg_data_home
        .filter(|d| d.is_absolute())
        .or_else(|| {
            home.filter(|h| !h.as_os_str().is_empty())
                .map(|h| h.join(".local").join("share"))
        })
        .map(|d| d.join("apistend"))
}

/// The names of an older version's files in `dir`, if any.
fn legacy_files(dir: &Path) -> Option<Vec<&'static str>> {
    let found: Vec<&str> = LEGACY
        .into_iter()
        .filter(|f| dir.join(f).exists())
        .collect();
    (!found.is_empty()).then_some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_follows_xdg_then_home() {
        let p = PathBuf::from;
        assert_eq!(
            default_dir(Some(p("/x/data")), Some(p("/home/u"))),
            Some(p("/x/data/apistend"))
        );
        assert_eq!(
            default_dir(Some(p("relative")), Some(p("/home/u"))),
            Some(p("/home/u/.local/share/apistend"))
        );
        assert_eq!(default_dir(None, None), None);
    }

    #[test]
    fn an_older_versions_files_are_found() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(legacy_files(dir.path()), None);
        std::fs::write(dir.path().join(CA_KEY_FILE), "k").unwrap();
        assert_eq!(legacy_files(dir.path()), Some(vec![CA_KEY_FILE]));
    }
}
