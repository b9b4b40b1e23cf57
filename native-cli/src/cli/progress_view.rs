//! What `efmesh apply` and `efmesh run` draw at a terminal while they build: a live bar per
//! running model (several at once under `--jobs`), one line per model when it finishes
//! (built, backfilled, reused or failed, its batches and how long it took), and a closing
//! summary. The per-batch log lines it replaces are shown only from `--log-level debug` up.
//! Off a terminal, under `--json` or with a forced logfmt nothing is drawn and the logs are
//! exactly what they are without it.

use crate::cli::logging::{self, Logging};
use crate::{ModelFinished, Progress, ProgressHook};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How often a running model's bar is redrawn (its spinner and elapsed time), also between
/// batches.
const TICK: Duration = Duration::from_millis(120);

/// The terminal view of one apply (or one run tick): feed it the apply's [`Progress`] through
/// [`ProgressView::hook`], then call [`ProgressView::finish`] once the apply returned.
#[derive(Debug)]
pub struct ProgressView {
    multi: &'static MultiProgress,
    color: bool,
    clock: Instant,
    tally: Mutex<Tally>,
}

/// What the view has seen so far.
#[derive(Debug, Default)]
struct Tally {
    /// The bar of each running model.
    bars: HashMap<String, ProgressBar>,
    /// Models whose physics this apply built.
    built: usize,
    /// Models that kept their physics and had only new batches computed.
    backfilled: usize,
    /// Models served from physics that already existed.
    reused: usize,
    /// Models whose work failed.
    failed: usize,
    /// Whether any event came (an apply with nothing to do prints no summary).
    seen: bool,
    /// Whether the summary was printed.
    finished: bool,
}

/// How a model's line starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Built,
    Backfilled,
    Reused,
    Failed,
}

impl Status {
    fn word(self) -> &'static str {
        match self {
            Status::Built => "built",
            Status::Backfilled => "backfilled",
            Status::Reused => "reused",
            Status::Failed => "failed",
        }
    }

    /// The SGR color of the word: green for work done, dim for reuse, bold red for failure.
    fn sgr(self) -> &'static str {
        match self {
            Status::Built | Status::Backfilled => "32",
            Status::Reused => "2",
            Status::Failed => "1;31",
        }
    }

    fn of(f: &ModelFinished<'_>) -> Status {
        if f.failed {
            Status::Failed
        } else if f.built || f.batches == 0 {
            Status::Built
        } else {
            Status::Backfilled
        }
    }
}

impl ProgressView {
    /// The view for a command's apply, if one may be drawn: only for people, so only with
    /// pretty logs at a terminal ([`Logging::bars_allowed`]) and never under `--json`. While it
    /// exists the per-model and per-batch log events are hidden below `debug`.
    pub fn start(logging: Logging, json: bool) -> Option<Arc<ProgressView>> {
        if json || !logging.bars_allowed() {
            return None;
        }
        logging::set_view_drawn(true);
        Some(Arc::new(ProgressView {
            multi: logging::bars(),
            color: std::env::var_os("NO_COLOR").is_none(),
            clock: Instant::now(),
            tally: Mutex::new(Tally::default()),
        }))
    }

    /// The hook to pass in `ApplyOptions::progress` (or `RunOptions::progress`).
    pub fn hook(self: &Arc<Self>) -> ProgressHook {
        let view = Arc::clone(self);
        ProgressHook(Arc::new(move |p| view.update(p)))
    }

    fn tally(&self) -> MutexGuard<'_, Tally> {
        // a panic elsewhere never takes the display down with it
        self.tally.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Draw what `p` says: start a model's bar, move it, or replace it with the model's line.
    pub fn update(&self, p: Progress<'_>) {
        let mut t = self.tally();
        t.seen = true;
        match p {
            Progress::Started { model, batches } => {
                let bar = self.multi.add(new_bar(model, batches));
                bar.enable_steady_tick(TICK);
                t.bars.insert(model.to_string(), bar);
            }
            Progress::Batches(b) => {
                if let Some(bar) = t.bars.get(b.model) {
                    bar.set_length(b.total as u64);
                    bar.set_position(b.done as u64);
                }
            }
            Progress::Finished(f) => {
                if let Some(bar) = t.bars.remove(f.model) {
                    bar.finish_and_clear();
                    self.multi.remove(&bar);
                }
                let status = Status::of(&f);
                match status {
                    Status::Built => t.built += 1,
                    Status::Backfilled => t.backfilled += 1,
                    Status::Failed => t.failed += 1,
                    Status::Reused => {}
                }
                let text = line(status, f.model, f.batches, Some(f.duration), self.color);
                self.print(&text);
            }
            Progress::Reused { model } => {
                t.reused += 1;
                let text = line(Status::Reused, model, 0, None, self.color);
                self.print(&text);
            }
        }
    }

    /// Take every bar off the screen (a failed apply leaves some running), print the summary
    /// if anything was shown, and give the log events back to the pretty logs. Once; later
    /// calls do nothing.
    pub fn finish(&self) {
        let mut t = self.tally();
        if t.finished {
            return;
        }
        t.finished = true;
        for (_, bar) in t.bars.drain() {
            bar.finish_and_clear();
            self.multi.remove(&bar);
        }
        if t.seen {
            let text = summary(&t, self.clock.elapsed());
            self.print(&text);
        }
        logging::set_view_drawn(false);
    }

    /// One line above the bars.
    fn print(&self, text: &str) {
        // Not `MultiProgress::println`: that pads the line with blanks to the terminal's width
        // and ends it without a newline, which a copy from the scrollback keeps.
        self.multi.suspend(|| {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        });
    }
}

impl Drop for ProgressView {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A running model's bar: batches done of its total with an ETA, or a spinner and the time
/// spent when it is built whole.
fn new_bar(model: &str, batches: usize) -> ProgressBar {
    // Hidden until the view adds it to its bars: a bar made with its own stderr target would
    // draw itself there once (on `set_prefix`), a line the bars never clear.
    let (length, template) = if batches > 0 {
        (
            Some(batches as u64),
            "{spinner} {prefix} [{bar:30}] {pos}/{len} batches, ETA {eta}",
        )
    } else {
        (None, "{spinner} {prefix} building, {elapsed}")
    };
    let bar = ProgressBar::with_draw_target(length, ProgressDrawTarget::hidden());
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> ").tick_chars("|/-\\ "));
    }
    bar.set_prefix(model.to_string());
    bar
}

/// A finished model's line: `built      med.moves        48 batches   1.2s`. A reused model
/// took no time of this apply's, so its line has none.
fn line(
    status: Status,
    model: &str,
    batches: usize,
    took: Option<Duration>,
    color: bool,
) -> String {
    let word = format!("{:<10}", status.word());
    let word = if color {
        format!("\u{1b}[{}m{word}\u{1b}[0m", status.sgr())
    } else {
        word
    };
    let detail = match batches {
        0 => String::new(),
        1 => "1 batch".to_string(),
        n => format!("{n} batches"),
    };
    match took {
        Some(took) => format!("{word} {model:<28} {detail:>12} {:>8}", human(took)),
        None => format!("{word} {model}"),
    }
}

/// The closing line: `10 built, 2 reused, 0 failed in 3.4s` (and how many were only
/// backfilled, when any were).
fn summary(t: &Tally, took: Duration) -> String {
    let backfilled = match t.backfilled {
        0 => String::new(),
        n => format!("{n} backfilled, "),
    };
    format!(
        "{} built, {backfilled}{} reused, {} failed in {}",
        t.built,
        t.reused,
        t.failed,
        human(took)
    )
}

/// A duration for people: `850ms`, `3.4s`, `2m05s`.
fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        let s = d.as_secs();
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_at_a_glance() {
        assert_eq!(human(Duration::from_millis(0)), "0ms");
        assert_eq!(human(Duration::from_millis(999)), "999ms");
        assert_eq!(human(Duration::from_millis(3420)), "3.4s");
        assert_eq!(human(Duration::from_secs(125)), "2m05s");
    }

    #[test]
    fn a_line_names_the_status_the_model_its_batches_and_the_time() {
        let l = line(
            Status::Built,
            "med.moves",
            48,
            Some(Duration::from_millis(1200)),
            false,
        );
        assert_eq!(
            l.split_whitespace().collect::<Vec<_>>(),
            ["built", "med.moves", "48", "batches", "1.2s"]
        );
        let l = line(Status::Reused, "mart.stays", 0, None, true);
        assert_eq!(l, "\u{1b}[2mreused    \u{1b}[0m mart.stays");
    }

    #[test]
    fn the_status_says_what_was_computed() {
        let f = |failed, built, batches| ModelFinished {
            model: "m",
            failed,
            built,
            batches,
            duration: Duration::ZERO,
        };
        assert_eq!(Status::of(&f(false, true, 0)), Status::Built);
        assert_eq!(Status::of(&f(false, true, 3)), Status::Built);
        assert_eq!(Status::of(&f(false, false, 3)), Status::Backfilled);
        assert_eq!(Status::of(&f(true, true, 0)), Status::Failed);
    }

    #[test]
    fn the_summary_counts_each_outcome() {
        let mut t = Tally {
            built: 3,
            reused: 2,
            failed: 1,
            ..Default::default()
        };
        assert_eq!(
            summary(&t, Duration::from_millis(40)),
            "3 built, 2 reused, 1 failed in 40ms"
        );
        t.backfilled = 4;
        assert_eq!(
            summary(&t, Duration::from_millis(40)),
            "3 built, 4 backfilled, 2 reused, 1 failed in 40ms"
        );
    }
}
