//! `manifest.json`: the contract between the native half that writes the parquet lake and
//! everything that reads it, down to a browser.
//!
//! A browser cannot glob over HTTP, so each version of a model publishes, beside its files, a
//! manifest naming its exact file set and saying what the data may be believed to answer.
//! It is written through a temporary name and a rename after every apply or run that changed
//! the version, and it never names a file that is not in place.
//!
//! Compatibility: new fields are additive (readers ignore fields they do not know); a change of
//! meaning bumps [`MANIFEST_VERSION`]. `manifest-schema/manifest.schema.json` is the JSON Schema
//! of this type, and the tests validate every manifest efmesh writes against it.
//! Feature-free, so the WebAssembly reader shares this very definition.

use crate::passport::{Answerable, Effective};
use crate::types::TypeFamily;
use serde::{Deserialize, Serialize};

/// The manifest format's version; bumped only when a field changes meaning.
pub const MANIFEST_VERSION: u32 = 1;

/// The file name of a version's manifest, in its `fp=<fp8>` directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// One version of one model, as published in the lake.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// [`MANIFEST_VERSION`] at the time of writing.
    pub manifest_version: u32,
    /// `schema.table`.
    pub model: String,
    /// The fingerprint of the version's data (its physical fingerprint): the `fp=` directory is
    /// its first 8 hex digits.
    pub fingerprint: String,
    /// The model's kind (`INCREMENTAL_BY_TIME_RANGE`, `FULL`, ...).
    pub kind: String,
    /// Every data file of the version, relative to the manifest's directory.
    pub files: Vec<ManifestFile>,
    /// The columns the files hold, in order.
    pub schema: Vec<ManifestColumn>,
    /// The done intervals, merged into ranges (time-range models; empty for other kinds).
    pub intervals: Vec<ManifestInterval>,
    /// As the model's owner declares it.
    pub answerable: Answerable,
    /// As the model's owner declares them.
    pub caveats: Vec<String>,
    /// What the ledger says about this version's own history.
    pub freshness: Freshness,
    /// The passport narrowed by every ancestor. Every efmesh writes it; a reader still accepts
    /// a manifest without it (from a producer that knows only the declared half) and then
    /// falls back to the declared passport.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective: Option<Effective>,
    /// Columns this version was built without (a redacted environment's physics).
    pub redacted: Vec<String>,
    /// When the manifest was written (ISO 8601, UTC).
    pub generated_at: String,
}

/// One immutable, content-addressed data file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestFile {
    /// Relative to the manifest's directory: `interval=<start>/data-<hash8>.parquet`.
    pub path: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Rows in the file.
    pub rows: u64,
    /// The interval the file belongs to; `None` for kinds without intervals.
    // present even when null: the schema requires it
    #[serde(deserialize_with = "Option::deserialize")]
    pub interval: Option<ManifestInterval>,
}

/// A column of the published data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestColumn {
    /// The column's name.
    pub name: String,
    /// The type as the engine reports it (`BIGINT`, `TIMESTAMP`).
    #[serde(rename = "type")]
    pub sql_type: String,
    /// The type's family, which is what readers in other engines compare.
    pub family: TypeFamily,
}

/// `[start, end)`, in ISO 8601 UTC.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ManifestInterval {
    /// The first instant.
    pub start: String,
    /// The first instant after it.
    pub end: String,
}

impl From<crate::interval::Range> for ManifestInterval {
    fn from(r: crate::interval::Range) -> Self {
        ManifestInterval {
            start: crate::passport::iso(r.start),
            end: crate::passport::iso(r.end),
        }
    }
}

/// What the interval ledger says about the version's own history; derived, never declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Freshness {
    /// Complete without a gap from the model's start up to this instant (exclusive); `None`
    /// when the first interval is not done (or the kind has no intervals).
    // present even when null: the schema requires it
    #[serde(deserialize_with = "Option::deserialize")]
    pub contiguous_through: Option<String>,
    /// The newest done interval, which may lie beyond a gap.
    // present even when null: the schema requires it
    #[serde(deserialize_with = "Option::deserialize")]
    pub latest_interval: Option<ManifestInterval>,
    /// Intervals whose last attempt failed.
    pub failed_intervals: Vec<ManifestInterval>,
    /// Where the model's history ends (exclusive), from its `end`: once it is complete through
    /// this instant there is nothing left to compute, so it never goes stale. Absent when the
    /// history is open (and in manifests written before efmesh knew `end`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_end: Option<String>,
}

impl Freshness {
    /// What `ledger` says about a version's own history, whose intervals are `unit` wide and
    /// run from `start` to `end` (exclusive; `None` when open); `failed` are the intervals
    /// whose last attempt failed. Manifests and `efmesh passport` both read freshness this way.
    pub fn of(
        ledger: &crate::interval::Ledger,
        start: Option<chrono::NaiveDateTime>,
        end: Option<chrono::NaiveDateTime>,
        unit: crate::interval::IntervalUnit,
        failed: &[crate::interval::Range],
    ) -> Freshness {
        Freshness {
            contiguous_through: start
                .and_then(|s| ledger.covered_through(s, end))
                .map(crate::passport::iso),
            latest_interval: ledger
                .latest()
                .map(|end| crate::interval::Range::new(end - unit.step(), end).into()),
            failed_intervals: failed.iter().map(|r| (*r).into()).collect(),
            history_end: end.map(crate::passport::iso),
        }
    }
}

impl Manifest {
    /// Parse a manifest, refusing a newer format this reader does not understand.
    pub fn parse(json: &str) -> Result<Manifest, ManifestError> {
        let probe: serde_json::Value =
            serde_json::from_str(json).map_err(|e| ManifestError::Malformed(e.to_string()))?;
        Manifest::from_value(probe)
    }

    /// [`Manifest::parse`] for a manifest that is already a JSON value (a JavaScript object
    /// handed to the WebAssembly reader).
    pub fn from_value(value: serde_json::Value) -> Result<Manifest, ManifestError> {
        if nests_deeper_than(&value, MAX_MANIFEST_DEPTH) {
            return Err(ManifestError::Malformed(format!(
                "it nests deeper than {MAX_MANIFEST_DEPTH} levels; a manifest needs four"
            )));
        }
        let version = value
            .get("manifestVersion")
            .and_then(|v| v.as_u64())
            .ok_or_else(|| {
                ManifestError::Malformed("missing `manifestVersion` (a whole number)".into())
            })?;
        if version > MANIFEST_VERSION as u64 {
            return Err(ManifestError::Newer {
                found: version,
                supported: MANIFEST_VERSION,
            });
        }
        let m: Manifest =
            serde_json::from_value(value).map_err(|e| ManifestError::Malformed(e.to_string()))?;
        m.validate()?;
        Ok(m)
    }

    /// The rules serde's types cannot express, mirroring the JSON Schema's patterns and enums,
    /// so a reader refuses what the schema refuses instead of trusting a bad file list or
    /// misreading an instant.
    fn validate(&self) -> Result<(), ManifestError> {
        let bad =
            |field: &str, why: String| Err(ManifestError::Malformed(format!("`{field}`: {why}")));
        if self.fingerprint.len() != 32
            || !self
                .fingerprint
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return bad(
                "fingerprint",
                format!("`{}` is not 32 lower-case hex digits", self.fingerprint),
            );
        }
        if self.model.split('.').count() != 2 || self.model.split('.').any(str::is_empty) {
            return bad("model", format!("`{}` is not `schema.table`", self.model));
        }
        if !KINDS.contains(&self.kind.as_str()) {
            return bad(
                "kind",
                format!("`{}` is not one of {}", self.kind, KINDS.join(", ")),
            );
        }
        for (i, f) in self.files.iter().enumerate() {
            let p = &f.path;
            if p.is_empty()
                || p.starts_with('/')
                || p.contains('\\')
                || p.contains("://")
                || p.split('/').any(|seg| seg == "..")
            {
                return bad(
                    &format!("files[{i}].path"),
                    format!("`{p}` must be a relative path inside the manifest's folder"),
                );
            }
            if let Some(iv) = &f.interval {
                check_interval(&format!("files[{i}].interval"), iv)?;
            }
        }
        for (i, iv) in self.intervals.iter().enumerate() {
            check_interval(&format!("intervals[{i}]"), iv)?;
        }
        for (i, c) in self.schema.iter().enumerate() {
            // a reader writes the type into SQL: only what parses as a type may pass
            if let Err(why) = crate::type_name::TypeName::parse(&c.sql_type) {
                return bad(
                    &format!("schema[{i}].type"),
                    format!("`{}`: {why}", c.sql_type),
                );
            }
        }
        check_instant("generatedAt", &self.generated_at)?;
        let fr = &self.freshness;
        if let Some(t) = &fr.history_end {
            check_instant("freshness.historyEnd", t)?;
        }
        if let Some(t) = &fr.contiguous_through {
            check_instant("freshness.contiguousThrough", t)?;
        }
        if let Some(iv) = &fr.latest_interval {
            check_interval("freshness.latestInterval", iv)?;
        }
        for (i, iv) in fr.failed_intervals.iter().enumerate() {
            check_interval(&format!("freshness.failedIntervals[{i}]"), iv)?;
        }
        if let Some(e) = &self.effective {
            if let Some(t) = &e.complete_through {
                check_instant("effective.completeThrough", t)?;
            }
        }
        Ok(())
    }
}

/// The kinds a MODEL block can declare, as manifests spell them: the canonical names
/// `Kind::name` writes (aliases such as `SCD_TYPE_2_BY_TIME` are read as one of these).
/// Feature-free, so the browser validates `kind` without the SQL-analysis half.
pub const KINDS: &[&str] = &[
    "FULL",
    "VIEW",
    "EMBEDDED",
    "INCREMENTAL_BY_TIME_RANGE",
    "INCREMENTAL_BY_UNIQUE_KEY",
    "INCREMENTAL_BY_PARTITION",
    "SCD_TYPE_2",
    "SCD_TYPE_2_BY_COLUMN",
    "SEED",
    "EXTERNAL",
];

/// How deeply a manifest may nest. A real one nests four levels; the limit keeps every
/// recursive reader of the value (serde, and the JavaScript bridge) far from a stack's end.
pub const MAX_MANIFEST_DEPTH: usize = 64;

/// Whether `value` nests deeper than `limit`, found without recursion so that the check
/// itself cannot overflow on the value it guards against.
fn nests_deeper_than(value: &serde_json::Value, limit: usize) -> bool {
    let mut stack = vec![(value, 1usize)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &serde_json::Value>> = match v {
            serde_json::Value::Array(a) => Box::new(a.iter()),
            serde_json::Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        if depth > limit {
            return true;
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    false
}

/// Parse a manifest instant: ISO 8601 UTC to the second, `2026-01-31T00:00:00Z`, exactly.
pub fn parse_instant(s: &str) -> Option<chrono::NaiveDateTime> {
    if s.len() != 20 || !s.ends_with('Z') {
        return None;
    }
    chrono::NaiveDateTime::parse_from_str(&s[..19], "%Y-%m-%dT%H:%M:%S").ok()
}

fn check_instant(field: &str, s: &str) -> Result<(), ManifestError> {
    match parse_instant(s) {
        Some(_) => Ok(()),
        None => Err(ManifestError::Malformed(format!(
            "`{field}`: `{s}` is not an ISO 8601 UTC instant like 2026-01-31T00:00:00Z"
        ))),
    }
}

fn check_interval(field: &str, iv: &ManifestInterval) -> Result<(), ManifestError> {
    check_instant(&format!("{field}.start"), &iv.start)?;
    check_instant(&format!("{field}.end"), &iv.end)
}

/// Why a manifest cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ManifestError {
    /// Not JSON, or not shaped like a manifest.
    #[error("malformed manifest: {0}")]
    Malformed(String),
    /// Written by a newer efmesh.
    #[error(
        "manifest version {found} is newer than this reader's {supported}; upgrade the reader"
    )]
    Newer {
        /// The version found.
        found: u64,
        /// The newest this reader knows.
        supported: u32,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_manifests_are_refused_and_unknown_fields_ignored() {
        let m = Manifest {
            manifest_version: MANIFEST_VERSION,
            model: "m.daily".into(),
            fingerprint: "ab".repeat(16),
            kind: "FULL".into(),
            files: vec![],
            schema: vec![],
            intervals: vec![],
            answerable: Answerable::Full,
            caveats: vec![],
            freshness: Freshness::default(),
            effective: Some(Effective {
                answerable: Answerable::Full,
                answerable_limited_by: None,
                complete_through: None,
                limited_by: None,
                caveats: vec![],
            }),
            redacted: vec![],
            generated_at: "2026-01-01T00:00:00Z".into(),
        };
        let mut v = serde_json::to_value(&m).unwrap();
        v["someFutureField"] = serde_json::json!(1);
        assert_eq!(Manifest::parse(&v.to_string()).unwrap(), m);
        v["manifestVersion"] = serde_json::json!(MANIFEST_VERSION + 1);
        assert!(matches!(
            Manifest::parse(&v.to_string()),
            Err(ManifestError::Newer { .. })
        ));
        assert!(matches!(
            Manifest::parse("{}"),
            Err(ManifestError::Malformed(_))
        ));
    }

    #[test]
    fn deep_or_crafted_manifests_are_refused_with_the_field() {
        let deep = format!(
            "{{\"manifestVersion\": 1, \"x\": {}1{}}}",
            "[".repeat(100),
            "]".repeat(100)
        );
        let err = Manifest::parse(&deep).unwrap_err().to_string();
        assert!(err.contains("deeper than 64"), "{err}");
        // deeper than serde_json's own limit: its error, not a crash
        let deeper = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(Manifest::parse(&deeper).is_err());

        let mut v = serde_json::json!({
            "manifestVersion": 1, "model": "m.daily", "fingerprint": "ab".repeat(16),
            "kind": "FULL", "files": [], "intervals": [], "answerable": "full", "caveats": [],
            "freshness": {"contiguousThrough": null, "latestInterval": null, "failedIntervals": []},
            "redacted": [], "generatedAt": "2026-01-01T00:00:00Z",
            "schema": [{"name": "n", "type": "DECIMAL(18, 3)", "family": "numeric"}]
        });
        Manifest::from_value(v.clone()).unwrap();
        v["schema"][0]["type"] = serde_json::json!("INT) AS n; DROP TABLE t; --");
        let err = Manifest::from_value(v).unwrap_err().to_string();
        assert!(err.contains("schema[0].type"), "{err}");
    }
}
