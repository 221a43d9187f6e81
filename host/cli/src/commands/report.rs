//! `devicerail report` and `devicerail bundle export|validate`: these only
//! resolve paths and print; [`devicerail_host_report::report`] and
//! [`devicerail_host_report::bundle`] do the work.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use devicerail_host_config::paths;
use devicerail_host_report::{bundle, report};

use super::{CommandError, human_bytes};
use crate::args::{BundleCommand, ReportArgs};
use crate::logging;

/// What `report` or `bundle export` names: a session id, a bundle file,
/// or (`None`) the last session.
fn session_or_bundle(
    source: Option<&str>,
    last: bool,
    data_dir: Option<&Path>,
) -> Result<report::Source, CommandError> {
    let data_dir = || paths::data_dir(data_dir);
    match (source, last) {
        (None, false) => Err(CommandError::NoSource),
        (None, true) => Ok(report::Source::Store {
            data_dir: data_dir()?,
            session: None,
        }),
        (Some(s), _) => {
            if let Ok(id) = s.parse::<devicerail_host_protocol::SessionId>() {
                return Ok(report::Source::Store {
                    data_dir: data_dir()?,
                    session: Some(id),
                });
            }
            let path = Path::new(s);
            if path.is_file() {
                Ok(report::Source::Bundle(path.to_path_buf()))
            } else {
                Err(CommandError::BadSource(s.to_owned()))
            }
        }
    }
}

/// `report [SESSION_ID | BUNDLE] [--last] [--out FILE]`.
pub(crate) fn report(
    source: Option<&str>,
    last: bool,
    out: Option<&Path>,
    data_dir: Option<&Path>,
) -> Result<(), CommandError> {
    let source = session_or_bundle(source, last, data_dir)?;
    let started = std::time::Instant::now();
    let data = report::load(&source)?;
    let out = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(format!("devicerail-report-{}.html", data.session.id)));
    let recorded = report::recorded_for(&source, &data);
    let w = report::write(&data, recorded.as_ref(), &out)?;
    println!(
        "wrote {} ({}): session {}, {} events, {} screenshots, in {} ms",
        out.display(),
        human_bytes(w.bytes),
        w.session,
        w.events,
        w.screenshots,
        started.elapsed().as_millis()
    );
    Ok(())
}

/// `bundle export [SESSION_ID] [--last] --out FILE`.
pub(crate) fn bundle_export(
    session: Option<&str>,
    last: bool,
    out: &Path,
    data_dir: Option<&Path>,
) -> Result<(), CommandError> {
    let session = match (session, last) {
        (None, false) => return Err(CommandError::NoSource),
        (None, true) => None,
        (Some(s), _) => Some(
            s.parse::<devicerail_host_protocol::SessionId>()
                .map_err(|_| CommandError::BadSource(s.to_owned()))?,
        ),
    };
    let e = bundle::export(&paths::data_dir(data_dir)?, session, out)?;
    println!(
        "wrote {} ({}): session {}, {} events, {} blobs",
        out.display(),
        human_bytes(e.bytes),
        e.session.id,
        e.events,
        e.blobs
    );
    Ok(())
}

/// `bundle validate FILE`.
pub(crate) fn bundle_validate(file: &Path) -> Result<(), CommandError> {
    let started = std::time::Instant::now();
    let data = bundle::validate(file)?;
    println!(
        "valid: session {}, {} events (sequences 1..{} contiguous), {} blobs, every digest and reference checked, in {} ms",
        data.session.id,
        data.events.len(),
        data.events.len(),
        data.blobs.len(),
        started.elapsed().as_millis()
    );
    Ok(())
}

/// Runs `report`.
pub(crate) fn run_report(a: ReportArgs) -> ExitCode {
    logging::init("warn");
    logging::exit(
        "report",
        report(
            a.source.as_deref(),
            a.last,
            a.out.as_deref(),
            a.data_dir.as_deref(),
        ),
    )
}

/// Runs `bundle export|validate`.
pub(crate) fn run_bundle(command: BundleCommand) -> ExitCode {
    logging::init("warn");
    match &command {
        BundleCommand::Export {
            session,
            last,
            out,
            data_dir,
        } => logging::exit(
            "bundle export",
            bundle_export(session.as_deref(), *last, out, data_dir.as_deref()),
        ),
        BundleCommand::Validate { file } => logging::exit(
            &format!("bundle validate: {}", file.display()),
            bundle_validate(file),
        ),
    }
}
