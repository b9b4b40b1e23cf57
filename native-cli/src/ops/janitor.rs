//! The janitor: drops physics no environment has referenced for longer than a ttl.
//!
//! Each drop is preceded by a claim in one state transaction, so two janitors, or a janitor
//! and an apply that re-references the physics, can never drop live physics.

use crate::engine::Engine;
use crate::lake::store::LakeStore;
use crate::lake::VersionDir;
use crate::state::StateStore;
use crate::Error;
use chrono::{DateTime, Utc};
use efmesh_core::naming;
use serde::Serialize;
use std::sync::Arc;

/// Options for a janitor run.
#[derive(Debug, Clone)]
pub struct JanitorOptions {
    /// Drop physics orphaned longer ago than this many days.
    pub ttl_days: f64,
    /// Report what would be dropped, drop nothing.
    pub dry_run: bool,
    /// "Now" (defaults to the clock).
    pub now: Option<DateTime<Utc>>,
    /// Whether a `[ducklake]` catalog is attached: a version may be a table there, and
    /// DuckLake's snapshots older than the ttl are expired and their files deleted.
    pub ducklake: bool,
}

impl Default for JanitorOptions {
    fn default() -> Self {
        JanitorOptions {
            ttl_days: 7.0,
            dry_run: false,
            now: None,
            ducklake: false,
        }
    }
}

/// One physical relation the janitor handled.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Collected {
    /// The model it belonged to.
    pub model: String,
    /// The relation.
    pub table: String,
    /// When the last environment stopped referencing it.
    pub orphaned_at: Option<String>,
    /// The version's lake folder, removed with it (parquet versions only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<String>,
}

/// What a janitor run did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JanitorReport {
    /// Dropped (or, with `dryRun`, droppable) physics.
    pub dropped: Vec<Collected>,
    /// Candidates another process claimed or re-referenced first.
    pub skipped: Vec<Collected>,
    /// Whether this was a dry run.
    pub dry_run: bool,
}

/// Run the janitor; `lake` is where parquet versions' files are (`[lake] path`).
pub fn run(
    state: &mut dyn StateStore,
    engine: &mut dyn Engine,
    lake: Option<Arc<dyn LakeStore>>,
    opts: &JanitorOptions,
) -> Result<JanitorReport, Error> {
    let now = opts.now.unwrap_or_else(Utc::now);
    // the CLI bounds the ttl; a library caller's NaN or century-long ttl keeps everything
    let ttl_ms = opts.ttl_days * 86_400_000.0;
    let cutoff = (ttl_ms.is_finite() && ttl_ms >= 0.0)
        .then(|| chrono::Duration::try_milliseconds(ttl_ms as i64))
        .flatten()
        .and_then(|d| now.checked_sub_signed(d))
        .unwrap_or(chrono::DateTime::<Utc>::MIN_UTC);
    let claimer = format!("janitor-{}-{}", std::process::id(), now.timestamp_micros());
    let mut report = JanitorReport {
        dropped: vec![],
        skipped: vec![],
        dry_run: opts.dry_run,
    };
    let mut ducklake_dropped = false;
    for p in state.orphans(cutoff)? {
        // a version of a model the project may no longer have: look for it in both catalogs
        let in_ducklake = opts.ducklake && {
            let r = naming::physical_relation(&p.model, &p.physical_fingerprint, true);
            engine.relation_kind(&r)?.is_some()
        };
        let folder = lake
            .as_ref()
            .map(|l| VersionDir::new(l.clone(), &p.model, &p.physical_fingerprint))
            .filter(|d| d.exists());
        let item = Collected {
            model: p.model.clone(),
            table: naming::physical_relation(&p.model, &p.physical_fingerprint, in_ducklake),
            orphaned_at: p.orphaned_at.map(|t| t.to_rfc3339()),
            files: folder.as_ref().map(VersionDir::url),
        };
        if opts.dry_run {
            report.dropped.push(item);
            continue;
        }
        if !state.claim(&p.physical_fingerprint, &claimer, cutoff)? {
            report.skipped.push(item);
            continue;
        }
        // once claimed, the version is ours alone: drop its relation as what it really is,
        // then its files, and only then forget it, so a janitor killed halfway is simply rerun
        let dropped = drop_relation(engine, &item.table).and_then(|()| match &folder {
            Some(dir) => remove_version_files(dir, &p.physical_fingerprint),
            None => Ok(()),
        });
        match dropped {
            Ok(()) => {
                state.forget(&p.physical_fingerprint, &claimer)?;
                tracing::info!(
                    model = p.model.as_str(),
                    table = item.table.as_str(),
                    "dropped orphaned physics"
                );
                report.dropped.push(item);
                ducklake_dropped |= in_ducklake;
            }
            Err(e) => {
                state.release(&p.physical_fingerprint, &claimer)?;
                return Err(e);
            }
        }
    }
    if ducklake_dropped {
        // a dropped DuckLake table keeps its files for time travel until its snapshots
        // expire: expire those older than the ttl, then delete the files no snapshot needs
        let d = engine.dialect();
        let catalog = d.literal(naming::DUCKLAKE_CATALOG);
        let before = d.literal(
            &cutoff
                .naive_utc()
                .format("%Y-%m-%d %H:%M:%S%.6f")
                .to_string(),
        );
        engine.execute(
            "expiring DuckLake snapshots",
            &format!("CALL ducklake_expire_snapshots({catalog}, older_than => CAST({before} AS TIMESTAMPTZ))"),
        )?;
        engine.execute(
            "deleting DuckLake files no snapshot needs",
            &format!("CALL ducklake_cleanup_old_files({catalog}, cleanup_all => true)"),
        )?;
    }
    Ok(report)
}

/// Drop `qualified` as whatever the engine says it is; gone already is fine.
fn drop_relation(engine: &mut dyn Engine, qualified: &str) -> Result<(), Error> {
    let Some(kind) = engine.relation_kind(qualified)? else {
        return Ok(());
    };
    engine.execute(
        &format!("dropping {qualified}"),
        &engine.dialect().drop(kind, qualified, true),
    )?;
    Ok(())
}

/// Remove a dropped version's lake folder. Folders are named by the first 8 hex characters of
/// the physical fingerprint, so the manifest inside must name this very version: a folder
/// another version shares is left alone rather than lost.
fn remove_version_files(dir: &VersionDir, physical_fingerprint: &str) -> Result<(), Error> {
    if let Some(m) = dir.manifest()? {
        if m.fingerprint != physical_fingerprint {
            tracing::warn!(
                folder = dir.url().as_str(),
                manifest = m.fingerprint.as_str(),
                dropped = physical_fingerprint,
                "the lake folder belongs to another version; left in place"
            );
            return Ok(());
        }
    }
    dir.store.delete_dir(&dir.key)
}
