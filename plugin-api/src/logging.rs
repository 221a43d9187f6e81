//! Plugin-side tracing: a plugin library has its own copy of `tracing`'s
//! globals, so the export glue installs a subscriber that forwards every
//! event to the host's log sink, which re-emits it tagged with the plugin
//! id. `log` records (from dependencies) are bridged too, but never above
//! DEBUG: dependencies' TRACE output can dump raw I/O (HTTP clients log
//! request bytes, which would include protected text).

use std::fmt::Write as _;

use abi_stable::std_types::RStr;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::{Layer, filter::LevelFilter};

use crate::ffi::FfiHostLogBox;

/// Numeric level shared by both sides: 1 = error ... 5 = trace.
pub(crate) fn level_to_u8(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

/// The inverse of [`level_to_u8`]; `None` for a number outside 1..=5.
pub(crate) fn u8_to_level(level: u8) -> Option<Level> {
    match level {
        1 => Some(Level::ERROR),
        2 => Some(Level::WARN),
        3 => Some(Level::INFO),
        4 => Some(Level::DEBUG),
        5 => Some(Level::TRACE),
        _ => None,
    }
}

fn filter_for(max_level: u8) -> LevelFilter {
    match u8_to_level(max_level) {
        Some(level) => LevelFilter::from_level(level),
        None => LevelFilter::OFF,
    }
}

struct Forward {
    sink: FfiHostLogBox,
}

#[derive(Default)]
struct Collect {
    message: String,
    fields: String,
}

impl Visit for Collect {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }
}

impl<S: Subscriber> Layer<S> for Forward {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        let mut collect = Collect::default();
        event.record(&mut collect);
        let text = if collect.fields.is_empty() {
            collect.message
        } else {
            format!("{}{}", collect.message, collect.fields)
        };
        self.sink.log(
            level_to_u8(meta.level()),
            RStr::from_str(meta.target()),
            RStr::from_str(&text),
        );
    }
}

/// Installs the forwarding subscriber as this library's global default.
/// Only the first call in a library has an effect.
pub(crate) fn install(plugin_id: &'static str, sink: FfiHostLogBox, max_level: u8) {
    let filter = filter_for(max_level);
    let subscriber = tracing_subscriber::registry().with(Forward { sink }.with_filter(filter));
    if tracing::subscriber::set_global_default(subscriber).is_ok() {
        let bridged = match filter.into_level() {
            Some(Level::ERROR) => 1,
            Some(Level::WARN) => 2,
            Some(Level::INFO) => 3,
            Some(Level::DEBUG | Level::TRACE) => MAX_BRIDGED_LOG_LEVEL,
            None => 0,
        };
        let _ = tracing_log::LogTracer::builder()
            .with_max_level(log_level(bridged))
            .init();
        tracing::debug!(plugin = plugin_id, "plugin log forwarding installed");
    }
}

/// The most verbose `log` level bridged from dependencies (DEBUG).
const MAX_BRIDGED_LOG_LEVEL: u8 = 4;

fn log_level(n: u8) -> tracing_log::log::LevelFilter {
    use tracing_log::log::LevelFilter as L;
    match n {
        1 => L::Error,
        2 => L::Warn,
        3 => L::Info,
        4 => L::Debug,
        5 => L::Trace,
        _ => L::Off,
    }
}
