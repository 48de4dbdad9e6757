//! `apistend catalog`: print the catalog; `apistend catalog import-wb-openapi`: regenerate WB's part.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use apistend_catalog::{Catalog, Overrides};

use crate::services_arg::ServicesArg;
use clap::{Args, Subcommand, ValueEnum};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct CatalogArgs {
    #[command(subcommand)]
    command: Option<CatalogCommand>,
    /// Only this service: wb, b24, apify, ozon, amocrm, moysklad, ymarket or one of `--services`.
    #[arg(long)]
    service: Option<String>,
    #[command(flatten)]
    services: ServicesArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// A TOML file of overrides to apply first.
    #[arg(long, env = "APISTEND_OVERRIDES")]
    overrides: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Json,
}

/// How a service reads JSON, as `import-requests --json` names it (a definition's `json`).
#[derive(Debug, Clone, Copy, ValueEnum)]
enum JsonArg {
    Strict,
    Go,
    Protobuf,
}

impl JsonArg {
    fn reading(self) -> apistend_catalog::JsonReading {
        match self {
            JsonArg::Strict => apistend_catalog::JsonReading::Strict,
            JsonArg::Go => apistend_catalog::JsonReading::Go,
            JsonArg::Protobuf => apistend_catalog::JsonReading::Protobuf,
        }
    }
}

#[derive(Debug, Subcommand)]
#[allow(clippy::enum_variant_names)] // they are the subcommands `import-…`
enum CatalogCommand {
    /// Read WB's OpenAPI specs (the *.yaml files of DIR) and write the catalog file.
    ImportWbOpenapi {
        /// Directory with the spec files.
        dir: PathBuf,
        /// Where to write the catalog JSON (default: standard output).
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
        /// Also write the sandbox's answers of every operation here (the embedded
        /// `crates/answers/data/wb-answers.pack`).
        #[arg(long)]
        answers: Option<PathBuf>,
    },
    /// Regenerate the operations of an amoCRM definition from endpoints.json (see
    /// ../shared/specs/amocrm): everything above the definition's marker line is kept.
    ImportAmocrm {
        /// The endpoints file.
        endpoints: PathBuf,
        /// The definition to rewrite (services/amocrm.toml).
        #[arg(long)]
        definition: PathBuf,
        /// Also write the endpoints' request rules here (the embedded
        /// `crates/answers/data/amocrm-requests.pack`).
        #[arg(long)]
        requests: Option<PathBuf>,
    },
    /// Regenerate the operations of an Apify definition from its official OpenAPI (see
    /// ../shared/specs/apify): everything above the definition's marker line is kept.
    ImportApify {
        /// The OpenAPI document (openapi.yaml).
        spec: PathBuf,
        /// The definition to rewrite (services/apify.toml).
        #[arg(long)]
        definition: PathBuf,
        /// Also write the sandbox's answers of every operation here (the embedded
        /// `crates/answers/data/apify-answers.pack`).
        #[arg(long)]
        answers: Option<PathBuf>,
    },
    /// Regenerate the operations of a definition from a vendor's official OpenAPI document (Ozon's
    /// seller-openapi.json): those its head does not write go below the marker line. With `--id`
    /// and `--prefix`: write a starting definition of a new service that the sandbox answers from
    /// the document (`--definition`, else ID.toml here; never over an existing file).
    ImportOpenapi {
        /// The OpenAPI document (YAML or JSON).
        spec: PathBuf,
        /// The definition to rewrite (services/ozon.toml), or to write with `--id`.
        #[arg(long, required_unless_present = "id")]
        definition: Option<PathBuf>,
        /// A new service's id: write a starting definition rather than rewrite one.
        #[arg(long, requires = "prefix")]
        id: Option<String>,
        /// The new service's path prefix in the sandbox (`/shop`).
        #[arg(long, requires = "id")]
        prefix: Option<String>,
        /// Also write the sandbox's answers of every operation here (an embedded
        /// `crates/answers/data/NAME-answers.pack`).
        #[arg(long)]
        answers: Option<PathBuf>,
        /// Endpoints the vendor documents outside its OpenAPI, with their answers (MoySklad's
        /// doc-only-endpoints.json).
        #[arg(long)]
        extra: Option<PathBuf>,
    },
    /// Regenerate the documented methods of a Bitrix24 definition from methods.json (see
    /// ../shared/specs/b24): everything above the definition's marker line is kept.
    ImportB24 {
        /// The methods file.
        methods: PathBuf,
        /// The definition to rewrite (services/b24.toml).
        #[arg(long)]
        definition: PathBuf,
        /// Also write the methods' documented examples here (the embedded
        /// `crates/answers/data/b24-methods.pack`).
        #[arg(long)]
        answers: Option<PathBuf>,
        /// Also write the methods' request rules here (the embedded
        /// `crates/answers/data/b24-requests.pack`: parameters, required, types).
        #[arg(long)]
        requests: Option<PathBuf>,
    },
    /// Write the sandbox's answers of every operation of an official OpenAPI document (YAML or
    /// JSON): the embedded `crates/answers/data/NAME-answers.pack` a definition's
    /// `examples = "NAME"` names.
    ImportAnswers {
        /// The OpenAPI document.
        spec: PathBuf,
        /// Where to write the answers file.
        #[arg(short = 'o', long)]
        output: PathBuf,
    },
    /// Write the request rules of an official OpenAPI document, or of every `*.yaml` of a
    /// directory (WB's specs): the embedded `crates/answers/data/NAME-requests.pack` that checks
    /// the requests of a definition whose `examples = "NAME"`.
    ImportRequests {
        /// The OpenAPI document, or a directory of them.
        spec: PathBuf,
        /// Where to write the request rules.
        #[arg(short = 'o', long)]
        output: PathBuf,
        /// How the service's server reads JSON (its definition's `json`): `go` (WB: `null`
        /// anywhere), `protobuf` (a grpc-gateway, Ozon's: `null` anywhere, numbers also as
        /// decimal text), else as described.
        #[arg(long, value_enum, default_value_t = JsonArg::Strict)]
        json: JsonArg,
    },
    /// Regenerate the limit groups and operations of a Yandex Market definition from
    /// limits.json (see ../shared/specs/yandex-market): everything above the marker is kept.
    ImportYandexMarket {
        /// The limits file.
        limits: PathBuf,
        /// The definition to rewrite (services/ymarket.toml).
        #[arg(long)]
        definition: PathBuf,
    },
}

/// Writes `specs` as the answers file `path` (what `apistend serve` embeds).
fn write_answers(
    specs: &apistend_sandbox::SpecAnswers,
    path: &std::path::Path,
) -> anyhow::Result<()> {
    std::fs::write(path, specs.to_file_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

pub(crate) fn run(args: CatalogArgs) -> anyhow::Result<()> {
    match args.command {
        Some(command) => import_cmd(command),
        None => list(&args),
    }
}

/// An `import-…` command: regenerates a definition (and its answers file) from the vendor's
/// description.
fn import_cmd(command: CatalogCommand) -> anyhow::Result<()> {
    match command {
        CatalogCommand::ImportWbOpenapi {
            dir,
            output,
            answers,
        } => {
            if let Some(path) = &answers {
                write_answers(&apistend_sandbox::SpecAnswers::load(&dir)?, path)?;
            }
            import(&dir, output)
        }
        CatalogCommand::ImportAmocrm {
            endpoints,
            definition,
            requests,
        } => import_amocrm(&endpoints, &definition, requests.as_deref()),
        CatalogCommand::ImportApify {
            spec,
            definition,
            answers,
        } => {
            if let Some(path) = &answers {
                write_answers(&apistend_sandbox::SpecAnswers::load_file(&spec)?, path)?;
            }
            regenerate(&spec, &definition, apistend_catalog::import::apify::import)
        }
        CatalogCommand::ImportOpenapi {
            spec,
            definition,
            id,
            prefix,
            answers,
            extra,
        } => {
            if let Some(path) = &answers {
                write_answers(&apistend_sandbox::SpecAnswers::load_file(&spec)?, path)?;
            }
            if let (Some(id), Some(prefix)) = (&id, &prefix) {
                let definition = definition.unwrap_or_else(|| PathBuf::from(format!("{id}.toml")));
                return start_definition(&spec, &definition, id, prefix);
            }
            let definition = definition.context("--definition FILE, or --id ID --prefix P")?;
            let Some(extra) = extra else {
                return regenerate(
                    &spec,
                    &definition,
                    apistend_catalog::import::openapi::import,
                );
            };
            let extra = std::fs::read_to_string(&extra)
                .with_context(|| format!("reading {}", extra.display()))?;
            let text = std::fs::read_to_string(&spec)
                .with_context(|| format!("reading {}", spec.display()))?;
            let head = std::fs::read_to_string(&definition)
                .with_context(|| format!("reading {}", definition.display()))?;
            let out = apistend_catalog::import::openapi::import_with(&head, &text, Some(&extra))?;
            std::fs::write(&definition, out)
                .with_context(|| format!("writing {}", definition.display()))?;
            Ok(())
        }
        CatalogCommand::ImportB24 {
            methods,
            definition,
            answers,
            requests,
        } => import_b24(
            &methods,
            &definition,
            answers.as_deref(),
            requests.as_deref(),
        ),
        CatalogCommand::ImportAnswers { spec, output } => {
            write_answers(&apistend_sandbox::SpecAnswers::load_file(&spec)?, &output)
        }
        CatalogCommand::ImportRequests { spec, output, json } => {
            let dialect = apistend_answers::requests::Dialect::from(json.reading());
            let rules = apistend_sandbox::RequestRules::load(&spec, dialect)?;
            std::fs::write(&output, rules.to_file_bytes())
                .with_context(|| format!("writing {}", output.display()))
        }
        CatalogCommand::ImportYandexMarket { limits, definition } => regenerate(
            &limits,
            &definition,
            apistend_catalog::import::ymarket::import,
        ),
    }
}

/// `import-amocrm`: the definition's operations, and the endpoints' request rules when asked
/// for.
fn import_amocrm(
    endpoints: &std::path::Path,
    definition: &std::path::Path,
    requests: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    if let Some(path) = requests {
        let text = std::fs::read_to_string(endpoints)
            .with_context(|| format!("reading {}", endpoints.display()))?;
        let rules = apistend_sandbox::RequestRules::of_amocrm_endpoints(&text)?;
        std::fs::write(path, rules.to_file_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    regenerate(
        endpoints,
        definition,
        apistend_catalog::import::amocrm::import,
    )
}

/// `import-b24`: the definition's methods, and the methods' examples and request rules when
/// asked for.
fn import_b24(
    methods: &std::path::Path,
    definition: &std::path::Path,
    answers: Option<&std::path::Path>,
    requests: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(methods)
        .with_context(|| format!("reading {}", methods.display()))?;
    let write = |path: &std::path::Path, bytes: Vec<u8>| {
        std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
    };
    if let Some(path) = requests {
        write(
            path,
            apistend_sandbox::RequestRules::of_b24_methods(&text)?.to_file_bytes(),
        )?;
    }
    if let Some(path) = answers {
        write(
            path,
            apistend_sandbox::B24Methods::from_methods_json(&text)?.to_file_bytes(),
        )?;
    }
    regenerate(methods, definition, apistend_catalog::import::b24::import)
}

/// The catalog's operations and their limits, as a table or JSON rows.
fn list(args: &CatalogArgs) -> anyhow::Result<()> {
    let overrides = match &args.overrides {
        Some(path) => Overrides::from_toml(
            &std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?,
        )?,
        None => Overrides::default(),
    };
    let catalog = args.services.catalog(&overrides)?;
    let service = match &args.service {
        Some(id) => Some(catalog.service_id(id)?),
        None => None,
    };
    let rows = catalog.rows(service);
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &rows)?;
            writeln!(out)?;
        }
        Format::Table => {
            writeln!(
                out,
                "{:<6} {:<7} {:<32} {:<58} {:<48} {:>6} {:>12}",
                "SERV", "METHOD", "HOST", "PATH", "GROUP", "BURST", "INTERVAL"
            )?;
            for r in rows {
                let host = r.host.as_deref().map_or("-", apistend_catalog::short_host);
                let interval = if r.interval_ms >= 1000.0 {
                    format!("{}s", r.interval_ms / 1000.0)
                } else {
                    format!("{}ms", r.interval_ms)
                };
                let flag = if r.deprecated { " (deprecated)" } else { "" };
                writeln!(
                    out,
                    "{:<6} {:<7} {:<32} {:<58} {:<48} {:>6} {:>12}{flag}",
                    r.service, r.method, host, r.path, r.group, r.burst, interval
                )?;
            }
        }
    }
    Ok(())
}

/// `import-openapi --id --prefix`: a starting definition of a user's service, written only if it
/// loads (the document read from where the definition names it) and never over a file.
fn start_definition(
    spec: &std::path::Path,
    definition: &std::path::Path,
    id: &str,
    prefix: &str,
) -> anyhow::Result<()> {
    if definition.exists() {
        anyhow::bail!(
            "{} exists: to regenerate its operations, give --definition without --id",
            definition.display()
        );
    }
    let text =
        std::fs::read_to_string(spec).with_context(|| format!("reading {}", spec.display()))?;
    let dir = match definition.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let dir = std::fs::canonicalize(&dir).with_context(|| format!("{}", dir.display()))?;
    let at = std::fs::canonicalize(spec).with_context(|| format!("{}", spec.display()))?;
    // Beside the definition, or under its directory: a relative path (the two move together);
    // elsewhere, the absolute one.
    let named = at.strip_prefix(&dir).unwrap_or(&at).display().to_string();
    let out = apistend_catalog::import::openapi::starting(&text, id, prefix, &named)?;
    let defs = apistend_catalog::definition::Definitions::builtin()
        .with_file(definition.display().to_string(), out.clone())?;
    Catalog::load(&defs, None).context("the starting definition does not load")?;
    std::fs::write(definition, out).with_context(|| format!("writing {}", definition.display()))?;
    eprintln!(
        "wrote {}: `apistend serve --services {}` answers it at {prefix}",
        definition.display(),
        dir.display()
    );
    Ok(())
}

/// Rewrites the generated part of `definition` from `source` with `importer`.
fn regenerate(
    source: &std::path::Path,
    definition: &std::path::Path,
    importer: fn(&str, &str) -> Result<String, apistend_catalog::CatalogError>,
) -> anyhow::Result<()> {
    let read = |p: &std::path::Path| {
        std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))
    };
    let text = importer(&read(definition)?, &read(source)?)?;
    // Built once, so that a definition that does not load is never written.
    let name = definition.display().to_string();
    let defs =
        apistend_catalog::definition::Definitions::builtin().with_file(name, text.clone())?;
    Catalog::load(&defs, None).context("the generated definition does not load")?;
    std::fs::write(definition, text)
        .with_context(|| format!("writing {}", definition.display()))?;
    eprintln!("wrote {}", definition.display());
    Ok(())
}

fn import(dir: &std::path::Path, output: Option<PathBuf>) -> anyhow::Result<()> {
    let report = apistend_catalog::import::wb::import_dir(dir)?;
    if !report.errors.is_empty() {
        for e in &report.errors {
            eprintln!("{e}");
        }
        bail!(
            "{} limit block(s) could not be read; nothing written",
            report.errors.len()
        );
    }
    // Built once, so that a file that does not load is never written.
    Catalog::from_wb(&report.catalog).context("the imported catalog does not load")?;
    let mut json = serde_json::to_string_pretty(&report.catalog)?;
    json.push('\n');
    let ops = report.catalog.operations.len();
    let limited = report
        .catalog
        .operations
        .iter()
        .filter(|o| o.group.is_some())
        .count();
    match output {
        Some(path) => {
            std::fs::write(&path, json).with_context(|| format!("writing {}", path.display()))?;
        }
        None => std::io::stdout().lock().write_all(json.as_bytes())?,
    }
    eprintln!(
        "imported {ops} operations ({limited} with a limit, {} groups)",
        report.catalog.groups.len()
    );
    Ok(())
}
