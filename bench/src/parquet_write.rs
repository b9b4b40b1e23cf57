//! `parquet-write`: which way of writing a model's rows to a parquet file is
//! faster on this machine.
//!
//! `target parquet` publishes a model's output as parquet. There are two
//! candidate writers, and the choice between them should rest on a
//! measurement rather than on a guess:
//!
//! - **COPY**: DuckDB's `COPY (SELECT * FROM t) TO 'x.parquet' (FORMAT
//!   parquet)`, DuckDB's own parquet writer with its defaults (snappy). This
//!   is what efmesh does today.
//! - **ArrowWriter**: `Statement::query_arrow` from the `duckdb` crate hands
//!   the rows over as Arrow `RecordBatch`es, which the `parquet` crate's
//!   `ArrowWriter` (snappy, otherwise its defaults) writes to the file.
//!
//! Both run in one process against one in-memory DuckDB holding a
//! deterministic "model output" table, for two shapes of work: one large file
//! (a full refresh of a big model) and many tiny files (efmesh writes one file
//! per interval, e.g. 24 rows for an hourly interval of a daily-batched
//! model). Every timed sample is a whole write, from issuing the query to the
//! closed file; deleting the previous run's files is not timed. The methods
//! alternate which goes first in each run, so neither always inherits a warm
//! or a cold cache from the other. After timing, both methods' files are read
//! back through DuckDB's `read_parquet` and must match the source table in row
//! count, column names and types, and content (an order-independent hash).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use duckdb::Connection;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::timing::stats;

/// Rows of the large table when `--rows` is not given: big enough that the
/// write, not per-statement overhead, dominates.
pub const DEFAULT_ROWS: u64 = 5_000_000;

/// Rows per file in the small case: one hourly interval of a day.
pub const SMALL_ROWS: u64 = 24;

/// Files per run in the small case: enough that per-file overhead, which is
/// what matters for per-interval files, is measured well above timer noise.
pub const SMALL_FILES: usize = 1_000;

/// Mixed into every generated value, so the table is fixed across runs.
const SEED: u64 = 20_261_202;

/// The two writers under comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// DuckDB `COPY ... TO ... (FORMAT parquet)`, default (snappy) compression.
    Copy,
    /// `Statement::query_arrow` into the parquet crate's `ArrowWriter` (snappy).
    ArrowWriter,
}

impl Method {
    /// Both methods, in the order the report lists them.
    pub const ALL: [Method; 2] = [Method::Copy, Method::ArrowWriter];

    /// Label used in the report.
    pub fn label(self) -> &'static str {
        match self {
            Method::Copy => "DuckDB COPY",
            Method::ArrowWriter => "query_arrow + ArrowWriter",
        }
    }

    /// Short name used for file and directory names.
    fn slug(self) -> &'static str {
        match self {
            Method::Copy => "copy",
            Method::ArrowWriter => "arrow",
        }
    }
}

/// One shape of work: `files` files of `rows` rows each, all written from
/// `table` in every run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// Label used in the report (`large`, `small`).
    pub label: &'static str,
    /// Source table in the in-memory database.
    pub table: &'static str,
    /// Rows per file (= rows of `table`).
    pub rows: u64,
    /// Files written per run.
    pub files: usize,
}

impl Case {
    /// Rows written per run, over all files.
    pub fn total_rows(&self) -> u64 {
        self.rows * self.files as u64
    }
}

/// What `parquet-write` measures: the two cases, with their sizes.
pub fn cases(rows: u64, small_files: usize) -> [Case; 2] {
    [
        Case {
            label: "large",
            table: "model_large",
            rows,
            files: 1,
        },
        Case {
            label: "small",
            table: "model_small",
            rows: SMALL_ROWS.min(rows),
            files: small_files,
        },
    ]
}

/// `CREATE TABLE` for a realistic model output of `rows` rows: a key, an event
/// time, a low-cardinality dimension (12 departments), a measure, and a
/// higher-cardinality text column (up to ~1M distinct values, 10% NULL).
/// Every value is DuckDB's `hash()` of the row number and [`SEED`], so the
/// table is the same on every run and for any thread count (unlike
/// `setseed` + `random()`, which parallel execution makes order-dependent).
pub fn large_table_sql(table: &str, rows: u64) -> String {
    format!(
        "CREATE TABLE {table} AS
         SELECT
             i AS id,
             TIMESTAMP '2026-01-01' + to_seconds(i * 6)
                 + to_microseconds(CAST(hash(i, {SEED}, 1) % 6000000 AS BIGINT)) AS ts,
             (['finance', 'sales', 'operations', 'hr', 'it', 'legal', 'marketing', 'support',
               'research', 'logistics', 'procurement', 'facilities'])
                 [CAST(1 + hash(i, {SEED}, 2) % 12 AS BIGINT)] AS dept,
             CAST(hash(i, {SEED}, 3) % 2000000 AS DOUBLE) / 100.0 AS amount,
             CASE WHEN hash(i, {SEED}, 4) % 10 = 0 THEN NULL
                  ELSE 'customer ' || CAST(hash(i, {SEED}, 5) % 200000 AS VARCHAR) || ': '
                       || (['paid', 'refund', 'pending', 'partial', 'disputed'])
                              [CAST(1 + hash(i, {SEED}, 6) % 5 AS BIGINT)]
             END AS note
         FROM range({rows}) AS r(i)"
    )
}

/// `CREATE TABLE` for the small case: the first `rows` rows of the large
/// table, i.e. one interval's worth of the same data.
pub fn small_table_sql(table: &str, large: &str, rows: u64) -> String {
    format!("CREATE TABLE {table} AS SELECT * FROM {large} WHERE id < {rows} ORDER BY id")
}

/// The statement method (a) runs for one file.
pub fn copy_sql(table: &str, path: &Path) -> String {
    format!(
        "COPY (SELECT * FROM {table}) TO {} (FORMAT parquet)",
        sql_string(&path.display().to_string())
    )
}

/// A single-quoted SQL string literal.
fn sql_string(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The parquet crate's writer settings for method (b): snappy, like DuckDB's
/// default, and the crate's defaults otherwise (notably 1,048,576-row row
/// groups where DuckDB uses 122,880), since those are what a straightforward
/// integration would ship with.
pub fn writer_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build()
}

/// Write `table` to `path` with `method`; returns the time spent in `prepare`
/// and `query_arrow` (DuckDB planning, executing and materializing the query)
/// for [`Method::ArrowWriter`], zero for COPY, whose pipeline does not
/// separate reading from writing.
pub fn write_one(
    conn: &Connection,
    method: Method,
    table: &str,
    path: &Path,
    props: &WriterProperties,
) -> Result<Duration> {
    match method {
        Method::Copy => {
            let sql = copy_sql(table, path);
            conn.execute_batch(&sql).with_context(|| sql.clone())?;
            Ok(Duration::ZERO)
        }
        Method::ArrowWriter => {
            let start = Instant::now();
            let mut stmt = conn.prepare(&format!("SELECT * FROM {table}"))?;
            let batches = stmt.query_arrow([])?;
            let query = start.elapsed();
            let file =
                File::create(path).with_context(|| format!("creating {}", path.display()))?;
            let mut writer = ArrowWriter::try_new(file, batches.get_schema(), Some(props.clone()))?;
            for batch in batches {
                writer.write(&batch)?;
            }
            writer
                .close()
                .with_context(|| format!("closing {}", path.display()))?;
            Ok(query)
        }
    }
}

/// Timed samples of one method on one case.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// Wall time of each run (all `files` writes).
    pub wall: Vec<Duration>,
    /// Of each run, the time spent in `prepare` + `query_arrow` (ArrowWriter only).
    pub query: Vec<Duration>,
}

/// What the read-back of one method's files found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadBack {
    /// Rows over all files of the last run.
    pub rows: i64,
    /// `(name, type)` of every column, as `DESCRIBE` reports it.
    pub columns: Vec<(String, String)>,
    /// Order-independent content hash (sum of row hashes).
    pub fingerprint: String,
    /// Row groups in one file.
    pub row_groups: i64,
    /// Size in bytes of one file (the first, for the small case).
    pub file_bytes: u64,
    /// Size in bytes of all files of the last run.
    pub total_bytes: u64,
}

/// One method's result on one case.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// The writer.
    pub method: Method,
    /// The timed samples.
    pub samples: Samples,
    /// The read-back of the last run's files.
    pub read_back: ReadBack,
}

impl Measurement {
    /// Median wall time of a run.
    pub fn median(&self) -> Duration {
        stats::median(&self.samples.wall).unwrap_or_default()
    }

    /// Median time in `prepare` + `query_arrow` per run.
    pub fn median_query(&self) -> Duration {
        stats::median(&self.samples.query).unwrap_or_default()
    }
}

/// Both methods on one case.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The case.
    pub case: Case,
    /// What the source table reads as: the reference both read-backs must match.
    pub source: ReadBack,
    /// One entry per [`Method::ALL`], in that order.
    pub methods: Vec<Measurement>,
}

impl CaseResult {
    /// `median(ArrowWriter) / median(COPY)`: above 1 means COPY is faster.
    pub fn arrow_over_copy(&self) -> f64 {
        let copy = self.methods[0].median().as_secs_f64();
        let arrow = self.methods[1].median().as_secs_f64();
        arrow / copy
    }
}

/// Everything `parquet-write` reports.
#[derive(Debug, Clone)]
pub struct Report {
    /// DuckDB's `version()`.
    pub duckdb_version: String,
    /// DuckDB's `threads` setting (COPY may use them all; ArrowWriter is one thread).
    pub duckdb_threads: String,
    /// Timed runs per method and case.
    pub runs: usize,
    /// Time to generate the source tables (not part of any sample).
    pub generate: Duration,
    /// One entry per case.
    pub cases: Vec<CaseResult>,
}

/// Generate the tables, time both methods on both cases `runs` times
/// (interleaved) inside `work`, then verify the last run's files.
pub fn run(rows: u64, small_files: usize, runs: usize, work: &Path) -> Result<Report> {
    ensure!(
        rows > 0 && runs > 0 && small_files > 0,
        "rows, runs and files must be positive"
    );
    let conn = Connection::open_in_memory().context("opening :memory:")?;
    let cases = cases(rows, small_files);
    let start = Instant::now();
    conn.execute_batch(&large_table_sql(cases[0].table, rows))?;
    conn.execute_batch(&small_table_sql(
        cases[1].table,
        cases[0].table,
        cases[1].rows,
    ))?;
    let generate = start.elapsed();
    let (duckdb_version, duckdb_threads) = conn.query_row(
        "SELECT version(), current_setting('threads')::VARCHAR",
        [],
        |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
    )?;
    let props = writer_properties();

    // One untimed write per method, so one-time costs (DuckDB loading its
    // parquet writer, first touches of the allocator and page cache) do not
    // land in the first sample of whichever method happens to go first.
    let warm = work.join("warm-up");
    std::fs::create_dir_all(&warm)?;
    for method in Method::ALL {
        let path = warm.join(format!("{}.parquet", method.slug()));
        write_one(&conn, method, cases[1].table, &path, &props)?;
    }
    std::fs::remove_dir_all(&warm)?;

    let mut results = vec![];
    for case in cases {
        eprintln!(
            "== {}: {} file(s) of {} rows, {runs} run(s) ==",
            case.label, case.files, case.rows
        );
        let mut samples = [Samples::default(), Samples::default()];
        for run in 0..runs {
            // Alternate the order so both methods get the same mix of
            // "first" and "second" positions.
            let order: [usize; 2] = if run % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in order {
                let method = Method::ALL[i];
                let dir = case_dir(work, &case, method);
                if dir.exists() {
                    std::fs::remove_dir_all(&dir)?;
                }
                std::fs::create_dir_all(&dir)?;
                let paths: Vec<PathBuf> = (0..case.files).map(|f| file_path(&dir, f)).collect();
                let start = Instant::now();
                let mut query = Duration::ZERO;
                for path in &paths {
                    query += write_one(&conn, method, case.table, path, &props)?;
                }
                let wall = start.elapsed();
                eprintln!(
                    "   run {}: {:<26} {:>10.1} ms",
                    run + 1,
                    method.label(),
                    stats::ms(wall)
                );
                samples[i].wall.push(wall);
                samples[i].query.push(query);
            }
        }
        let source = read_back(&conn, case.table, None)?;
        let mut methods = vec![];
        for (method, samples) in Method::ALL.into_iter().zip(samples) {
            let dir = case_dir(work, &case, method);
            let read_back = read_back(&conn, case.table, Some((&dir, case.files)))?;
            verify(&case, method, &source, &read_back)?;
            methods.push(Measurement {
                method,
                samples,
                read_back,
            });
        }
        results.push(CaseResult {
            case,
            source,
            methods,
        });
    }
    Ok(Report {
        duckdb_version,
        duckdb_threads,
        runs,
        generate,
        cases: results,
    })
}

/// Directory one method's files of one case go to.
fn case_dir(work: &Path, case: &Case, method: Method) -> PathBuf {
    work.join(format!("{}-{}", case.label, method.slug()))
}

/// Path of file `i` in `dir`.
fn file_path(dir: &Path, i: usize) -> PathBuf {
    dir.join(format!("part-{i:05}.parquet"))
}

/// Row count, column types, content fingerprint and layout of either the
/// source table (`files` = `None`) or the `n` parquet files in a directory,
/// read through DuckDB's `read_parquet`.
fn read_back(conn: &Connection, table: &str, files: Option<(&Path, usize)>) -> Result<ReadBack> {
    let (relation, row_groups, file_bytes, total_bytes) = match files {
        None => (table.to_string(), 0, 0, 0),
        Some((dir, n)) => {
            let first = file_path(dir, 0);
            let glob = sql_string(&dir.join("*.parquet").display().to_string());
            let row_groups: i64 = conn.query_row(
                &format!(
                    "SELECT count(DISTINCT row_group_id) FROM parquet_metadata({})",
                    sql_string(&first.display().to_string())
                ),
                [],
                |r| r.get(0),
            )?;
            let mut total = 0;
            for i in 0..n {
                let path = file_path(dir, i);
                total += std::fs::metadata(&path)
                    .with_context(|| format!("reading back {}", path.display()))?
                    .len();
            }
            let first_bytes = std::fs::metadata(&first)?.len();
            (
                format!("read_parquet({glob})"),
                row_groups,
                first_bytes,
                total,
            )
        }
    };
    let mut stmt = conn.prepare(&format!("DESCRIBE SELECT * FROM {relation}"))?;
    let columns = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
        .collect::<duckdb::Result<Vec<_>>>()?;
    let (rows, fingerprint) = conn.query_row(
        &format!(
            "SELECT count(*), CAST(sum(hash(id, ts, dept, amount, note)) AS VARCHAR) FROM {relation}"
        ),
        [],
        |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
    )?;
    Ok(ReadBack {
        rows,
        columns,
        fingerprint,
        row_groups,
        file_bytes,
        total_bytes,
    })
}

/// Fail unless `got` (a method's files) holds exactly the source table: a
/// faster writer that loses rows or changes types would be no candidate.
fn verify(case: &Case, method: Method, source: &ReadBack, got: &ReadBack) -> Result<()> {
    let what = format!("{} / {}", case.label, method.label());
    if got.rows != source.rows * case.files as i64 {
        bail!(
            "{what}: read back {} rows, expected {}",
            got.rows,
            source.rows * case.files as i64
        );
    }
    if got.columns != source.columns {
        bail!(
            "{what}: columns {:?}, expected {:?}",
            got.columns,
            source.columns
        );
    }
    // Every file holds the whole source table, so the glob's sum of row
    // hashes is `files` times the source's.
    let expected: i128 = source.fingerprint.parse::<i128>()? * case.files as i128;
    if got.fingerprint.parse::<i128>()? != expected {
        bail!(
            "{what}: content differs from the source (hash sum {} vs {expected})",
            got.fingerprint
        );
    }
    Ok(())
}

/// The report as markdown: one row per case and method, then the ratios and
/// what was verified.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(
        "| case | method | files × rows | median wall (min–max) | per file | rows/s | file size | total size | row groups/file |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for c in &report.cases {
        for m in &c.methods {
            let med = m.median();
            let (min, max) = min_max(&m.samples.wall);
            out.push_str(&format!(
                "| {} | {} | {} × {} | {} ({}–{}) | {} | {} | {} | {} | {} |\n",
                c.case.label,
                m.method.label(),
                thousands(c.case.files as u64),
                thousands(c.case.rows),
                duration(med),
                duration(min),
                duration(max),
                duration(med / c.case.files as u32),
                rate(c.case.total_rows(), med),
                bytes(m.read_back.file_bytes),
                bytes(m.read_back.total_bytes),
                m.read_back.row_groups,
            ));
        }
    }
    out.push('\n');
    for c in &report.cases {
        let r = c.arrow_over_copy();
        let (faster, factor) = if r >= 1.0 {
            (Method::Copy, r)
        } else {
            (Method::ArrowWriter, 1.0 / r)
        };
        let arrow = &c.methods[1];
        out.push_str(&format!(
            "- {}: {} is {factor:.2}× faster (ArrowWriter ÷ COPY = {r:.2}); of ArrowWriter's \
             median {}, {} is prepare + query_arrow (DuckDB planning, executing and materializing the query).\n",
            c.case.label,
            faster.label(),
            duration(arrow.median()),
            duration(arrow.median_query()),
        ));
    }
    for c in &report.cases {
        let cols = c
            .source
            .columns
            .iter()
            .map(|(n, t)| format!("{n} {t}"))
            .collect::<Vec<_>>()
            .join(", ");
        out.push_str(&format!(
            "- {} verified: both methods' files read back through read_parquet with {} rows, \
             columns ({cols}), and the source table's content hash.\n",
            c.case.label,
            thousands(c.source.rows as u64 * c.case.files as u64),
        ));
    }
    out
}

/// Smallest and largest sample.
fn min_max(samples: &[Duration]) -> (Duration, Duration) {
    let min = samples.iter().min().copied().unwrap_or_default();
    let max = samples.iter().max().copied().unwrap_or_default();
    (min, max)
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A duration in s above one second, else in ms (µs below a millisecond).
fn duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 0.001 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.0} µs", s * 1e6)
    }
}

/// Rows per second, in millions above one million.
fn rate(rows: u64, d: Duration) -> String {
    let r = rows as f64 / d.as_secs_f64();
    if r >= 1e6 {
        format!("{:.2} M", r / 1e6)
    } else {
        format!("{:.0} k", r / 1e3)
    }
}

/// A byte count in KiB or MiB.
fn bytes(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.1} KiB", n as f64 / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(5_000_000), "5,000,000");
        assert_eq!(duration(Duration::from_millis(2500)), "2.50 s");
        assert_eq!(duration(Duration::from_micros(1500)), "1.5 ms");
        assert_eq!(duration(Duration::from_micros(250)), "250 µs");
        assert_eq!(rate(5_000_000, Duration::from_secs(2)), "2.50 M");
        assert_eq!(rate(24_000, Duration::from_secs(1)), "24 k");
        assert_eq!(bytes(2048), "2.0 KiB");
        assert_eq!(bytes(3 << 20), "3.0 MiB");
    }

    #[test]
    fn copy_sql_quotes_the_path() {
        assert_eq!(
            copy_sql("t", Path::new("/tmp/it's/a.parquet")),
            "COPY (SELECT * FROM t) TO '/tmp/it''s/a.parquet' (FORMAT parquet)"
        );
    }

    #[test]
    fn generated_table_is_deterministic() {
        let fingerprint = || {
            let conn = Connection::open_in_memory().unwrap();
            conn.execute_batch(&large_table_sql("t", 10_000)).unwrap();
            read_back(&conn, "t", None).unwrap()
        };
        let a = fingerprint();
        assert_eq!(a, fingerprint());
        assert_eq!(a.rows, 10_000);
        let types: Vec<&str> = a.columns.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            types,
            ["BIGINT", "TIMESTAMP", "VARCHAR", "DOUBLE", "VARCHAR"]
        );
    }

    #[test]
    fn small_run_writes_and_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let report = run(5_000, 3, 2, dir.path()).unwrap();
        assert_eq!(report.cases.len(), 2);
        let small = &report.cases[1];
        assert_eq!((small.case.rows, small.case.files), (24, 3));
        for c in &report.cases {
            for m in &c.methods {
                assert_eq!(m.samples.wall.len(), 2);
                assert_eq!(
                    m.read_back.rows,
                    c.source.rows * c.case.files as i64,
                    "{}",
                    c.case.label
                );
                assert!(m.read_back.file_bytes > 0);
            }
        }
        let md = markdown(&report);
        assert!(md.contains("| large | DuckDB COPY | 1 × 5,000 |"), "{md}");
        assert!(
            md.contains("| small | query_arrow + ArrowWriter | 3 × 24 |"),
            "{md}"
        );
    }
}
