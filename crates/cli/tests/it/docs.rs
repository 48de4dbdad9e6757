//! The words a user reads first hold: every `--flag` the README and `docs/` write for
//! `apistend` is one its commands take (their `--help`), and every `apistend COMMAND` they
//! write is a command. Spans that run another tool (`cargo …`, `curl …`) are that tool's.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_apistend"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "apistend {args:?} --help");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The subcommands a help text lists under `Commands:`.
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect()
}

/// Every command path and the flags all of them take, from the binary's own help.
fn the_binarys_words() -> (BTreeSet<String>, BTreeSet<String>) {
    let mut paths = BTreeSet::new();
    let mut flags = BTreeSet::new();
    let mut todo: Vec<Vec<String>> = vec![vec![]];
    while let Some(path) = todo.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let text = help(&args);
        for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
            if word.starts_with("--") && word.len() > 2 {
                flags.insert(word.to_owned());
            }
        }
        for c in commands(&text) {
            let mut sub = path.clone();
            sub.push(c);
            paths.insert(sub.join(" "));
            todo.push(sub);
        }
    }
    (paths, flags)
}

/// The text of each span a reader would run or type: inline code and code-block lines.
fn spans(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            out.push(line.to_owned());
            continue;
        }
        out.extend(line.split('`').skip(1).step_by(2).map(str::to_owned));
    }
    out
}

/// Tools whose flags are their own.
const OTHER_TOOLS: [&str; 16] = [
    "cargo",
    "curl",
    "pip",
    "npm",
    "npx",
    "node",
    "python",
    "python3",
    "pytest",
    "maturin",
    "redis-server",
    "redis-cli",
    "wrk",
    "git",
    "schemathesis",
    "bench-",
];

/// Flags of cargo and rustc the prose names on their own (`--release`, `--cfg fuzzing`).
const NAMED_IN_PROSE: [&str; 2] = ["--release", "--cfg"];

#[test]
fn every_documented_command_and_flag_exists() {
    let (paths, flags) = the_binarys_words();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut docs = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "md") {
            docs.push(path);
        }
    }
    let mut wrong = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        for span in spans(&text) {
            let words: Vec<&str> = span.split_whitespace().collect();
            // A tool's own name, wherever it lives (`target/release/bench-gateway`).
            let tool = |w: &&str| {
                let name = w.rsplit('/').next().unwrap_or(w);
                OTHER_TOOLS.iter().any(|t| name.starts_with(t))
            };
            if words.iter().any(tool) {
                continue;
            }
            // `apistend COMMAND [SUBCOMMAND]`: the longest prefix that is a command.
            if let Some(at) = words.iter().position(|w| *w == "apistend") {
                let named: Vec<&str> = words[at + 1..]
                    .iter()
                    .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
                    .take(2)
                    .copied()
                    .collect();
                if let Some(first) = named.first()
                    && !paths.contains(*first)
                {
                    wrong.push(format!(
                        "{}: `apistend {first}` is no command",
                        doc.display()
                    ));
                }
                // A command with subcommands (`catalog`): the second word is one of them.
                if let [first, second] = named[..]
                    && paths.iter().any(|p| p.starts_with(&format!("{first} ")))
                    && !paths.contains(&format!("{first} {second}"))
                {
                    wrong.push(format!(
                        "{}: `apistend {first} {second}` is no command",
                        doc.display()
                    ));
                }
            }
            for w in &words {
                let flag: String = w
                    .trim_start_matches(['(', '[', '"', '\''])
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                if flag.starts_with("--")
                    && flag.len() > 2
                    && !flags.contains(&flag)
                    && !NAMED_IN_PROSE.contains(&flag.as_str())
                {
                    wrong.push(format!("{}: {flag} is no flag of apistend", doc.display()));
                }
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
