//! The metrics of a command, as a Prometheus textfile for node_exporter's textfile collector.
//!
//! Nobody watches a 3 a.m. tick, so its counts must reach the monitoring system. The executor
//! updates one in-process registry ([`global`]) as it works: intervals done and failed,
//! snapshots built, audits by result, per-model build durations. `--metrics PATH` on `apply`
//! and `run` writes that registry, plus the command's duration, the plan's categories and the
//! time of the last finished command by outcome, through a temporary file and a rename, so the
//! collector never reads half a file. There is no second tally: the file is the registry.

use prometheus::{Encoder, GaugeVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};
use std::path::Path;
use std::sync::OnceLock;

/// Every series efmesh exports.
pub struct Metrics {
    registry: Registry,
    /// Intervals computed and marked done (`model`, `env`).
    pub intervals_done: IntCounterVec,
    /// Intervals whose computation failed (`model`, `env`).
    pub intervals_failed: IntCounterVec,
    /// Physical tables built for new snapshots (`model`, `env`).
    pub snapshots_built: IntCounterVec,
    /// Audits run, by `result` (`passed`, `warned`, `failed`) (`model`, `env`).
    pub audits: IntCounterVec,
    /// How long the model's build (table or batches) took in this command (`model`, `env`).
    pub model_build_duration: GaugeVec,
    /// How long the command took (`command`, `env`).
    pub command_duration: GaugeVec,
    /// Models in the command's plan by category (`env`, `category`).
    pub planned_models: IntGaugeVec,
    /// Unix time the last command of each outcome finished (`command`, `env`, `outcome`).
    pub last_run: GaugeVec,
}

fn counter(r: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let c = IntCounterVec::new(Opts::new(name, help), labels).expect("valid metric definition");
    r.register(Box::new(c.clone())).expect("registered once");
    c
}

fn gauge(r: &Registry, name: &str, help: &str, labels: &[&str]) -> GaugeVec {
    let g = GaugeVec::new(Opts::new(name, help), labels).expect("valid metric definition");
    r.register(Box::new(g.clone())).expect("registered once");
    g
}

impl Metrics {
    fn new() -> Metrics {
        let r = Registry::new();
        let me = ["model", "env"];
        let planned = IntGaugeVec::new(
            Opts::new(
                "efmesh_planned_models",
                "Models in the command's plan, by category.",
            ),
            &["env", "category"],
        )
        .expect("valid metric definition");
        r.register(Box::new(planned.clone()))
            .expect("registered once");
        Metrics {
            intervals_done: counter(
                &r,
                "efmesh_intervals_done_total",
                "Intervals computed and marked done.",
                &me,
            ),
            intervals_failed: counter(
                &r,
                "efmesh_intervals_failed_total",
                "Intervals whose computation failed.",
                &me,
            ),
            snapshots_built: counter(
                &r,
                "efmesh_snapshots_built_total",
                "Physical tables built for new snapshots.",
                &me,
            ),
            audits: counter(
                &r,
                "efmesh_audits_total",
                "Audits run, by result (passed, warned, failed).",
                &["model", "env", "result"],
            ),
            model_build_duration: gauge(
                &r,
                "efmesh_model_build_duration_seconds",
                "Time spent building the model (its table or its batches) in the last command.",
                &me,
            ),
            command_duration: gauge(
                &r,
                "efmesh_command_duration_seconds",
                "Duration of the last command.",
                &["command", "env"],
            ),
            planned_models: planned,
            last_run: gauge(
                &r,
                "efmesh_last_run_timestamp_seconds",
                "Unix time the last command with this outcome finished.",
                &["command", "env", "outcome"],
            ),
            registry: r,
        }
    }

    /// The whole registry in Prometheus's text exposition format (0.0.4).
    pub fn encode(&self) -> String {
        let mut buf = vec![];
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut buf)
            .expect("text encoding to memory cannot fail");
        String::from_utf8(buf).expect("the text format is UTF-8")
    }
}

/// The process's registry, which the executor updates.
pub fn global() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

/// Record a plan's models by category (every category, zeros included, so a series that drops
/// to zero is not left at its old value).
pub fn record_plan(plan: &efmesh_core::plan::Plan) {
    let counts = plan.counts();
    for c in efmesh_core::plan::Category::ALL {
        global()
            .planned_models
            .with_label_values(&[plan.env.as_str(), c.label()])
            .set(counts.get(c).copied().unwrap_or(0) as i64);
    }
}

/// How a finished command went, for the textfile.
pub struct Finished<'a> {
    /// `apply` or `run`.
    pub command: &'a str,
    /// The environment.
    pub env: &'a str,
    /// `ok`, `awaiting-human`, `lock-held` or `error`.
    pub outcome: &'a str,
    /// How long it took.
    pub duration: std::time::Duration,
}

/// Write the registry to `path` (temporary name, then rename) after `done` finished. The
/// last-run times of other outcomes and environments are carried over from the previous file,
/// so "last success" survives a failing tick. Errors are returned for the caller to warn about:
/// an unwritable metrics path never fails the command.
pub fn write_file(path: &Path, done: &Finished) -> Result<(), String> {
    let m = global();
    if let Some(text) = crate::util::atomic_file::read(path) {
        if let Ok(previous) =
            prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        {
            for s in previous
                .samples
                .iter()
                .filter(|s| s.metric == "efmesh_last_run_timestamp_seconds")
            {
                let (Some(c), Some(e), Some(o)) = (
                    s.labels.get("command"),
                    s.labels.get("env"),
                    s.labels.get("outcome"),
                ) else {
                    continue;
                };
                if let prometheus_parse::Value::Gauge(v) | prometheus_parse::Value::Untyped(v) =
                    s.value
                {
                    m.last_run.with_label_values(&[c, e, o]).set(v);
                }
            }
        }
    }
    m.command_duration
        .with_label_values(&[done.command, done.env])
        .set(done.duration.as_secs_f64());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default();
    m.last_run
        .with_label_values(&[done.command, done.env, done.outcome])
        .set(now);
    let text = m.encode();
    crate::util::atomic_file::write(path, text.as_bytes())
        .map_err(|(_, e)| format!("could not write metrics to `{}`: {e}", path.display()))
}
