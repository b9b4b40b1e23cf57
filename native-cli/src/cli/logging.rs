//! Where the CLI's logs go and how they look. Logs always go to stderr. Off a terminal each
//! event is one logfmt line (`ts=… level=info msg=built model=… env=… duration_ms=15`), so a
//! log reader or an agent can group by field; at a terminal they are colored text for people.
//! There an apply or a run draws its progress view (`progress_view.rs`): log lines are written
//! around its bars, never through them, and the per-model and per-batch events it replaces
//! (target [`crate::PROGRESS`]) are shown only from `debug` up while it is drawn.

use indicatif::{MultiProgress, ProgressDrawTarget};
use std::fmt::{self, Write as _};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::filter::{dynamic_filter_fn, LevelFilter, Targets};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

/// The environment variable that forces a log format (`logfmt` or `pretty`) whatever stderr is.
pub const FORMAT_VAR: &str = "EFMESH_LOG_FORMAT";

/// How log events are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One logfmt line per event: for machines, and the default when stderr is not a terminal.
    Logfmt,
    /// Colored text (unless `NO_COLOR` is set): for people, the default at a terminal.
    Pretty,
}

impl LogFormat {
    /// The format `EFMESH_LOG_FORMAT` (`forced`) asks for, else the one that suits where stderr
    /// goes. An unknown value falls back to the latter and is returned too, so it can be logged.
    pub fn choose(forced: Option<&str>, stderr_is_terminal: bool) -> (LogFormat, Option<String>) {
        let auto = if stderr_is_terminal {
            LogFormat::Pretty
        } else {
            LogFormat::Logfmt
        };
        match forced.map(|v| v.trim().to_ascii_lowercase()) {
            None => (auto, None),
            Some(v) if v.is_empty() || v == "auto" => (auto, None),
            Some(v) if v == "logfmt" => (LogFormat::Logfmt, None),
            Some(v) if v == "pretty" => (LogFormat::Pretty, None),
            Some(v) => (auto, Some(v)),
        }
    }
}

/// What `init` set up, which the progress view needs to know.
#[derive(Debug, Clone, Copy)]
pub struct Logging {
    /// The format chosen.
    pub format: LogFormat,
}

impl Logging {
    /// Whether an apply may draw its progress view: only with pretty logs at a terminal (a
    /// forced logfmt is for machines, which a redrawn bar would only confuse).
    pub fn bars_allowed(&self) -> bool {
        self.format == LogFormat::Pretty && std::io::stderr().is_terminal()
    }
}

/// Install the global subscriber: events at `level` and above, to stderr, in the format
/// `EFMESH_LOG_FORMAT` forces or else the one that suits where stderr goes.
pub fn init(level: tracing::Level) -> Logging {
    let terminal = std::io::stderr().is_terminal();
    let forced = std::env::var(FORMAT_VAR).ok();
    let (format, unknown) = LogFormat::choose(forced.as_deref(), terminal);
    let filter = filter(level);
    match format {
        LogFormat::Logfmt => {
            let _ = tracing_subscriber::registry()
                .with(filter)
                .with(SpanFields)
                .with(
                    tracing_subscriber::fmt::layer()
                        .event_format(Logfmt)
                        .with_writer(Stderr),
                )
                .try_init();
        }
        LogFormat::Pretty => {
            let color = terminal && std::env::var_os("NO_COLOR").is_none();
            // what the progress view shows, it shows instead of these lines unless asked for
            let verbose = level >= tracing::Level::DEBUG;
            let shown = dynamic_filter_fn(move |meta, _| {
                verbose || meta.target() != crate::PROGRESS || !VIEW_DRAWN.load(Ordering::SeqCst)
            });
            let _ = tracing_subscriber::registry()
                .with(filter)
                .with(
                    tracing_subscriber::fmt::layer()
                        .compact()
                        .with_target(false)
                        .with_ansi(color)
                        .with_writer(Stderr)
                        .with_filter(shown),
                )
                .try_init();
        }
    }
    if let Some(v) = unknown {
        tracing::warn!(
            value = v.as_str(),
            "unknown {FORMAT_VAR}; expected `logfmt` or `pretty`"
        );
    }
    Logging { format }
}

/// efmesh's own events at `level`; those of the libraries it uses (SQL parser internals and
/// the like) only from `warn` up, unless `level` is `trace`.
fn filter(level: tracing::Level) -> Targets {
    let ours = LevelFilter::from_level(level);
    let theirs = if level == tracing::Level::TRACE {
        LevelFilter::TRACE
    } else {
        ours.min(LevelFilter::WARN)
    };
    Targets::new()
        .with_default(theirs)
        .with_target("efmesh", ours)
        .with_target("efmesh_core", ours)
}

/// A span's fields as text, kept in the span so a logfmt line can carry them.
#[derive(Debug, Default)]
struct Fields {
    message: Option<String>,
    pairs: Vec<(&'static str, String)>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.push(field, value.to_string());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.push(field, format!("{value:?}"));
    }
}

impl Fields {
    fn push(&mut self, field: &Field, value: String) {
        match field.name() {
            "message" => self.message = Some(value),
            // a library's `log` record: its target is worth keeping, its source location not
            "log.target" => self.pairs.push(("target", value)),
            name if name.starts_with("log.") => {}
            name => self.pairs.push((name, value)),
        }
    }
}

/// Records each new span's fields (the `model` of the statements a model runs) for [`Logfmt`].
struct SpanFields;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for SpanFields {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: Context<'_, S>,
    ) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }
}

/// One logfmt line per event: `ts`, `level`, `msg`, the event's fields, then those of the
/// spans it is in (unless the event already has a field of that name).
struct Logfmt;

impl<S, N> FormatEvent<S, N> for Logfmt
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let ts = chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string();
        let level = event.metadata().level().as_str().to_ascii_lowercase();
        let mut pairs: Vec<(&str, String)> = vec![("ts", ts), ("level", level)];
        pairs.push(("msg", fields.message.take().unwrap_or_default()));
        pairs.append(&mut fields.pairs);
        if let Some(scope) = ctx.event_scope() {
            for span in scope {
                if let Some(f) = span.extensions().get::<Fields>() {
                    for (k, v) in &f.pairs {
                        if !pairs.iter().any(|(have, _)| have == k) {
                            pairs.push((k, v.clone()));
                        }
                    }
                }
            }
        }
        let mut line = String::new();
        for (i, (k, v)) in pairs.iter().enumerate() {
            if i > 0 {
                line.push(' ');
            }
            push_key(&mut line, k);
            line.push('=');
            push_value(&mut line, v);
        }
        writeln!(w, "{line}")
    }
}

/// A logfmt key: the bare characters of the name (`_` for any that would need quoting).
fn push_key(out: &mut String, key: &str) {
    if key.is_empty() {
        out.push('_');
    }
    for c in key.chars() {
        out.push(if needs_quotes(c) { '_' } else { c });
    }
}

fn needs_quotes(c: char) -> bool {
    c <= ' ' || c == '=' || c == '"' || c == '\\' || c.is_control()
}

/// A logfmt value: bare when it can be, else double-quoted with `\"`, `\\`, `\n`, `\r`, `\t`
/// and `\u00XX` escapes, so a value never breaks the line or smuggles a terminal escape.
fn push_value(out: &mut String, v: &str) {
    if !v.is_empty() && !v.chars().any(needs_quotes) {
        out.push_str(v);
        return;
    }
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The progress bars being drawn, if the CLI drew any; log lines are written around them.
static BARS: OnceLock<MultiProgress> = OnceLock::new();

/// Whether a progress view is on screen, so the pretty layer leaves its events to it.
static VIEW_DRAWN: AtomicBool = AtomicBool::new(false);

/// The one set of bars on stderr that log lines are written around (created on first use).
/// Only the progress view adds bars to it, and only when [`Logging::bars_allowed`].
pub(crate) fn bars() -> &'static MultiProgress {
    BARS.get_or_init(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()))
}

/// Say whether a progress view is drawn: while it is, the events of target
/// [`crate::PROGRESS`] are left out of the pretty logs unless the level is `debug` or finer.
pub(crate) fn set_view_drawn(drawn: bool) {
    VIEW_DRAWN.store(drawn, Ordering::SeqCst);
}

/// stderr, written so a log line never lands in the middle of a progress bar: while bars are
/// drawn each line is written with them cleared and redrawn after it.
#[derive(Debug, Clone, Copy)]
struct Stderr;

impl<'a> MakeWriter<'a> for Stderr {
    type Writer = Stderr;

    fn make_writer(&'a self) -> Self::Writer {
        Stderr
    }
}

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    // the fmt layer writes each event with one `write_all`
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match BARS.get() {
            Some(bars) => bars.suspend(|| std::io::stderr().lock().write_all(buf)),
            None => std::io::stderr().lock().write_all(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(v: &str) -> String {
        let mut s = String::new();
        push_value(&mut s, v);
        s
    }

    #[test]
    fn values_are_bare_only_when_they_can_be() {
        assert_eq!(value("mart.daily"), "mart.daily");
        assert_eq!(value("3/13"), "3/13");
        assert_eq!(value(""), "\"\"");
        assert_eq!(
            value("[2026-01-15T00:00:00Z, 2026-01-22T00:00:00Z)"),
            "\"[2026-01-15T00:00:00Z, 2026-01-22T00:00:00Z)\""
        );
        assert_eq!(value("a=b"), "\"a=b\"");
        assert_eq!(value("say \"hi\""), "\"say \\\"hi\\\"\"");
        assert_eq!(value("C:\\x"), "\"C:\\\\x\"");
        assert_eq!(value("SELECT 1\nFROM t\t"), "\"SELECT 1\\nFROM t\\t\"");
        assert_eq!(value("\u{1b}[31mred"), "\"\\u001b[31mred\"");
    }

    #[test]
    fn keys_never_need_quotes() {
        let mut s = String::new();
        push_key(&mut s, "a b=c");
        assert_eq!(s, "a_b_c");
    }

    #[test]
    fn the_format_follows_stderr_unless_forced() {
        assert_eq!(LogFormat::choose(None, true), (LogFormat::Pretty, None));
        assert_eq!(LogFormat::choose(None, false), (LogFormat::Logfmt, None));
        assert_eq!(
            LogFormat::choose(Some("LOGFMT"), true),
            (LogFormat::Logfmt, None)
        );
        assert_eq!(
            LogFormat::choose(Some("pretty"), false),
            (LogFormat::Pretty, None)
        );
        assert_eq!(
            LogFormat::choose(Some("json"), false),
            (LogFormat::Logfmt, Some("json".into()))
        );
    }
}
