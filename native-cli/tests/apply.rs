//! `plan` / `apply` / `janitor` / `migrate` end to end: the real binary on a real DuckDB file
//! and SQLite state store.

mod common;
use common::*;
use efmesh::engine::duckdb::DuckDbEngine;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

const RAW: (&str, &str) = ("models/raw.sql", "MODEL (name s.raw, kind FULL, columns (id BIGINT, v DOUBLE));\nSELECT range AS id, range * 1.5 AS v FROM range(10)");
const MID: (&str, &str) = (
    "models/mid.sql",
    "MODEL (name s.mid, kind FULL);\nSELECT id, v FROM s.raw WHERE id < 8",
);
const TOP: (&str, &str) = (
    "models/top.sql",
    "MODEL (name s.top, kind FULL);\nSELECT count(*) AS n, sum(v) AS total FROM s.mid",
);
const SIDE: (&str, &str) = (
    "models/side.sql",
    "MODEL (name s.side, kind VIEW);\nSELECT id FROM s.raw",
);

fn apply_json(dir: &Path, env: &str) -> Value {
    let out = efmesh(dir)
        .args(["apply", env, "--yes", "--json"])
        .assert()
        .success();
    json(&out.get_output().stdout)
}

fn built(v: &Value) -> Vec<String> {
    v["built"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap().to_string())
        .collect()
}

fn query(dir: &Path, sql: &str) -> Vec<Option<String>> {
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let mut e = DuckDbEngine::open(dir, "efmesh.duckdb", &cfg).unwrap();
    e.query_strings(sql).unwrap()
}

fn one(dir: &Path, sql: &str) -> String {
    query(dir, sql)[0].clone().unwrap_or_default()
}

fn physical_tables(dir: &Path) -> usize {
    one(
        dir,
        "SELECT count(*)::VARCHAR FROM information_schema.tables WHERE table_schema = '_efmesh'",
    )
    .parse()
    .unwrap()
}

fn write(dir: &Path, (path, text): (&str, &str)) {
    std::fs::write(dir.join(path), text).unwrap();
}

#[test]
fn apply_dev_then_promote_to_prod_without_recomputing() {
    let p = project(&[RAW, MID, TOP, SIDE]);
    let v = apply_json(p.path(), "dev");
    assert_eq!(built(&v), vec!["s.raw", "s.mid", "s.side", "s.top"]);
    assert_eq!(one(p.path(), "SELECT n::VARCHAR FROM dev__s.top"), "8");
    let tables = physical_tables(p.path());

    let v = apply_json(p.path(), "prod");
    assert!(built(&v).is_empty(), "promotion builds nothing");
    // exactly one CREATE SCHEMA and four CREATE VIEW statements: no physical work at all
    assert_eq!(v["statements"], 5);
    assert_eq!(physical_tables(p.path()), tables);
    assert_eq!(one(p.path(), "SELECT n::VARCHAR FROM s.top"), "8");
    assert_eq!(v["plan"]["summary"]["added"], 4);

    // and a no-op plan changes nothing
    let out = efmesh(p.path())
        .args(["plan", "prod", "--json"])
        .assert()
        .success();
    let plan = json(&out.get_output().stdout);
    assert_eq!(plan["hasChanges"], false);
    assert_eq!(plan["actions"].as_array().unwrap().len(), 0);
}

#[test]
fn breaking_change_rebuilds_the_model_and_its_descendants_only() {
    let p = project(&[RAW, MID, TOP, SIDE]);
    apply_json(p.path(), "dev");
    write(
        p.path(),
        (
            "models/mid.sql",
            "MODEL (name s.mid, kind FULL);\nSELECT id, v FROM s.raw WHERE id < 5",
        ),
    );
    let out = efmesh(p.path())
        .args(["plan", "dev", "--json"])
        .assert()
        .success();
    let plan = json(&out.get_output().stdout);
    let cat = |m: &str| {
        plan["actions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["model"] == m)
            .map(|a| a["category"].as_str().unwrap().to_string())
    };
    assert_eq!(cat("s.mid").as_deref(), Some("breaking"));
    assert_eq!(cat("s.top").as_deref(), Some("indirect"));
    assert_eq!(cat("s.raw"), None, "unchanged models are not listed");
    let mid = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["model"] == "s.mid")
        .unwrap();
    assert_eq!(mid["explain"], serde_json::json!(["where"]));
    let v = apply_json(p.path(), "dev");
    assert_eq!(built(&v), vec!["s.mid", "s.top"]);
    assert_eq!(one(p.path(), "SELECT n::VARCHAR FROM dev__s.top"), "5");
}

#[test]
fn non_breaking_change_rebuilds_only_the_model() {
    let p = project(&[RAW, MID, TOP, SIDE]);
    apply_json(p.path(), "dev");
    write(
        p.path(),
        (
            "models/mid.sql",
            "MODEL (name s.mid, kind FULL);\nSELECT id, v, v * 2 AS v2 FROM s.raw WHERE id < 8",
        ),
    );
    let v = apply_json(p.path(), "dev");
    assert_eq!(built(&v), vec!["s.mid"]);
    let actions = v["plan"]["actions"].as_array().unwrap();
    let top = actions.iter().find(|a| a["model"] == "s.top").unwrap();
    assert_eq!(top["category"], "indirect");
    assert_eq!(top["build"], false);
    assert_ne!(
        top["physicalFingerprint"], top["fingerprint"],
        "the new version of s.top reuses the old physics"
    );
    assert_eq!(
        one(p.path(), "SELECT max(v2)::VARCHAR FROM dev__s.mid"),
        "21.0"
    );
    assert_eq!(one(p.path(), "SELECT n::VARCHAR FROM dev__s.top"), "8");
}

#[test]
fn metadata_only_change_rebuilds_nothing() {
    let p = project(&[RAW, MID, TOP]);
    apply_json(p.path(), "dev");
    write(p.path(), ("models/mid.sql", "MODEL (name s.mid, kind FULL, description 'only the middle', owner ops, cron '@hourly');\nSELECT id, v FROM s.raw WHERE id < 8"));
    let v = apply_json(p.path(), "dev");
    assert!(built(&v).is_empty());
    assert_eq!(v["plan"]["summary"]["metadata-only"], 1);
    let out = efmesh(p.path())
        .args(["plan", "dev", "--json"])
        .assert()
        .success();
    assert_eq!(
        json(&out.get_output().stdout)["hasChanges"],
        false,
        "the new metadata was recorded"
    );
}

#[test]
fn removed_model_loses_its_view_but_keeps_its_physics() {
    let p = project(&[RAW, MID, TOP, SIDE]);
    apply_json(p.path(), "dev");
    let tables = physical_tables(p.path());
    std::fs::remove_file(p.path().join("models/side.sql")).unwrap();
    let v = apply_json(p.path(), "dev");
    assert_eq!(v["plan"]["summary"]["removed"], 1);
    assert_eq!(one(p.path(), "SELECT count(*)::VARCHAR FROM information_schema.tables WHERE table_schema = 'dev__s' AND table_name = 'side'"), "0");
    assert_eq!(
        physical_tables(p.path()),
        tables,
        "physics waits for the janitor"
    );
}

#[test]
fn non_tty_apply_with_changes_exits_2_and_touches_nothing() {
    let p = project(&[RAW, MID]);
    let out = efmesh(p.path())
        .args(["apply", "dev", "--json"])
        .assert()
        .code(2);
    let v = json(&out.get_output().stdout);
    assert_eq!(v["applied"], false);
    assert_eq!(v["plan"]["hasChanges"], true);
    efmesh(p.path())
        .args(["apply", "dev"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("pass --yes"));
    assert!(!p.path().join("efmesh.duckdb").exists() || physical_tables(p.path()) == 0);
    // after apply, the same command is a no-op that exits 0 without --yes
    apply_json(p.path(), "dev");
    efmesh(p.path())
        .args(["apply", "dev"])
        .assert()
        .success()
        .stdout(predicate::str::contains("No changes."));
}

#[test]
fn plan_and_apply_json_shapes_are_frozen() {
    let p = project(&[RAW, MID]);
    let redact = |mut v: Value| {
        for a in v
            .pointer_mut("/actions")
            .or(None)
            .into_iter()
            .flat_map(|a| a.as_array_mut().unwrap().iter_mut())
        {
            for k in ["fingerprint", "physicalFingerprint", "previousFingerprint"] {
                if a[k].is_string() {
                    a[k] = Value::String(format!("[{k}]"));
                }
            }
        }
        v
    };
    let out = efmesh(p.path())
        .args(["plan", "dev", "--json"])
        .assert()
        .success();
    insta::assert_json_snapshot!("plan_json", redact(json(&out.get_output().stdout)));
    let mut v = apply_json(p.path(), "dev");
    v["plan"] = redact(v["plan"].take());
    insta::assert_json_snapshot!("apply_json", v);
}

#[test]
fn a_build_killed_partway_leaves_views_untouched_and_the_next_apply_completes_it() {
    let slow = ("models/slow.sql", "MODEL (name s.slow, kind FULL);\nSELECT count(*) AS n FROM s.raw, range(400000000) t(x) WHERE hash(x) % 7 = 3 AND s.raw.id = 0");
    let p = project(&[RAW, slow]);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("efmesh"))
        .env("EFMESH_LOCK_TTL_SECONDS", "2")
        .current_dir(p.path())
        .args(["apply", "dev", "--yes", "--log-level", "info"])
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // wait until the fast parent is built and the slow build has started
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let line = lines
            .next()
            .expect("apply ended before the slow build started")
            .unwrap();
        if line.contains("building") && line.contains("s.slow") {
            break;
        }
        assert!(std::time::Instant::now() < deadline);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.kill().unwrap(); // SIGKILL
                           // the killed holder's lock lapses after its ttl (2 s here); the next apply may take it
    std::thread::sleep(std::time::Duration::from_millis(2300));
    child.wait().unwrap();

    // no view of dev exists, and the state has no dev environment
    assert_eq!(
        one(
            p.path(),
            "SELECT count(*)::VARCHAR FROM information_schema.tables WHERE table_schema = 'dev__s'"
        ),
        "0"
    );
    let out = efmesh(p.path())
        .args(["plan", "dev", "--json"])
        .assert()
        .success();
    let plan = json(&out.get_output().stdout);
    let raw = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["model"] == "s.raw")
        .unwrap();
    assert_eq!(
        (raw["category"].as_str(), raw["build"].as_bool()),
        (Some("added"), Some(false)),
        "s.raw's physics was kept"
    );

    let v = apply_json(p.path(), "dev");
    assert_eq!(
        built(&v),
        vec!["s.slow"],
        "only the interrupted build is redone"
    );
    assert_eq!(
        one(p.path(), "SELECT (n > 0)::VARCHAR FROM dev__s.slow"),
        "true"
    );
}

#[test]
fn janitor_drops_only_orphans_older_than_the_ttl() {
    let p = project(&[RAW, MID]);
    apply_json(p.path(), "dev");
    apply_json(p.path(), "prod");
    write(
        p.path(),
        (
            "models/mid.sql",
            "MODEL (name s.mid, kind FULL);\nSELECT id, v FROM s.raw WHERE id < 3",
        ),
    );
    apply_json(p.path(), "dev");
    // the old s.mid is still served by prod: nothing to collect
    let out = efmesh(p.path())
        .args(["janitor", "--ttl", "0", "--json"])
        .assert()
        .success();
    assert_eq!(
        json(&out.get_output().stdout)["dropped"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    apply_json(p.path(), "prod");
    let before = physical_tables(p.path());
    // orphaned just now: a 7-day ttl keeps it, a dry run only lists it
    let out = efmesh(p.path())
        .args(["janitor", "--json"])
        .assert()
        .success();
    assert_eq!(
        json(&out.get_output().stdout)["dropped"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    let out = efmesh(p.path())
        .args(["janitor", "--ttl", "0", "--dry-run", "--json"])
        .assert()
        .success();
    assert_eq!(
        json(&out.get_output().stdout)["dropped"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(physical_tables(p.path()), before);
    let out = efmesh(p.path())
        .args(["janitor", "--ttl", "0", "--json"])
        .assert()
        .success();
    let v = json(&out.get_output().stdout);
    assert_eq!(v["dropped"][0]["model"], "s.mid");
    assert_eq!(physical_tables(p.path()), before - 1);
    assert_eq!(
        one(p.path(), "SELECT count(*)::VARCHAR FROM s.mid"),
        "3",
        "live physics untouched"
    );
    // going back to the old definition rebuilds what the janitor removed
    write(p.path(), MID);
    let v = apply_json(p.path(), "dev");
    assert_eq!(built(&v), vec!["s.mid"]);
}

#[test]
fn concurrent_janitors_never_drop_the_same_physics_twice() {
    let p = project(&[RAW, MID]);
    apply_json(p.path(), "dev");
    for i in 0..3 {
        write(
            p.path(),
            (
                "models/mid.sql",
                &format!("MODEL (name s.mid, kind FULL);\nSELECT id, v FROM s.raw WHERE id < {i}"),
            ),
        );
        apply_json(p.path(), "dev");
    }
    // three orphans; two janitor processes race for them
    let spawn = || {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("efmesh"))
            .env("EFMESH_LOCK_TTL_SECONDS", "2")
            .current_dir(p.path())
            .args(["janitor", "--ttl", "0", "--json"])
            .output()
            .unwrap()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(spawn);
        let b = s.spawn(spawn);
        (a.join().unwrap(), b.join().unwrap())
    });
    let mut dropped = 0;
    for out in [&a, &b] {
        // DuckDB allows one writer process; the loser of the file lock fails cleanly, as a
        // lock conflict (exit 3) naming the winner
        let v = json(&out.stdout);
        if out.status.success() {
            dropped += v["dropped"].as_array().unwrap().len();
        } else {
            assert_eq!(out.status.code(), Some(3), "{v}");
            assert_eq!(v["error"]["code"], "engine-locked", "{v}");
            assert!(
                v["error"]["message"].as_str().unwrap().contains("(PID "),
                "{v}"
            );
            assert!(
                v["error"]["help"].as_str().unwrap().contains("one writer"),
                "{v}"
            );
        }
    }
    let out = efmesh(p.path())
        .args(["janitor", "--ttl", "0", "--json"])
        .assert()
        .success();
    dropped += json(&out.get_output().stdout)["dropped"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(dropped, 3, "every orphan dropped exactly once");
    assert_eq!(
        one(p.path(), "SELECT count(*)::VARCHAR FROM dev__s.mid"),
        "2"
    );
}

#[test]
fn old_state_store_is_refused_until_migrated() {
    let p = project(&[RAW]);
    let c = rusqlite::Connection::open(p.path().join("efmesh.state.sqlite")).unwrap();
    c.execute_batch("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('state_version', '0');").unwrap();
    drop(c);
    efmesh(p.path())
        .args(["plan", "dev"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("efmesh migrate"));
    let out = efmesh(p.path())
        .args(["migrate", "--json"])
        .assert()
        .success();
    let v = json(&out.get_output().stdout);
    assert_eq!((v["from"].as_u64(), v["to"].as_u64()), (Some(0), Some(3)));
    assert!(Path::new(v["backup"].as_str().unwrap()).is_file());
    apply_json(p.path(), "dev");
    // a corrupt store is a clear error, not a panic
    std::fs::write(p.path().join("efmesh.state.sqlite"), vec![b'x'; 4096]).unwrap();
    let _ = std::fs::remove_file(p.path().join("efmesh.state.sqlite-wal"));
    let _ = std::fs::remove_file(p.path().join("efmesh.state.sqlite-shm"));
    efmesh(p.path())
        .args(["plan", "dev"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("corrupt").and(predicate::str::contains("help:")));
}

#[test]
fn init_scaffolds_a_project_that_applies() {
    let dir = tempfile::tempdir().unwrap();
    efmesh(dir.path()).args(["init", "wh"]).assert().success();
    let wh = dir.path().join("wh");
    efmesh(&wh).arg("check").assert().success();
    let v = apply_json(&wh, "dev");
    assert_eq!(built(&v).len(), 4);
    efmesh(dir.path())
        .args(["init", "wh"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("already holds"));
}

#[test]
fn a_no_op_plan_never_reads_stored_payloads() {
    let p = project(&[RAW, MID, TOP]);
    apply_json(p.path(), "dev");
    // garble every stored payload: a no-op plan must not need them
    let c = rusqlite::Connection::open(p.path().join("efmesh.state.sqlite")).unwrap();
    c.execute("UPDATE snapshots SET payload = 'not json'", [])
        .unwrap();
    let applied_by: String = c
        .query_row(
            "SELECT applied_by FROM plans ORDER BY id DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        applied_by,
        efmesh::os_user(),
        "the journal records who applied"
    );
    drop(c);
    let out = efmesh(p.path())
        .args(["plan", "dev", "--json"])
        .assert()
        .success();
    assert_eq!(json(&out.get_output().stdout)["hasChanges"], false);
    // a real change does read them, and a broken one is reported as corrupt state
    write(
        p.path(),
        (
            "models/mid.sql",
            "MODEL (name s.mid, kind FULL);\nSELECT id, v FROM s.raw WHERE id < 2",
        ),
    );
    efmesh(p.path())
        .args(["plan", "dev"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("corrupt"));
}

fn plan_out(dir: &Path, env: &str) -> (Value, String) {
    let out = efmesh(dir)
        .args(["--log-level", "debug", "plan", env, "--json"])
        .assert()
        .success();
    let o = out.get_output();
    (
        json(&o.stdout),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn a_no_op_plan_is_answered_from_the_project_cache_with_the_same_answer() {
    let p = project(&[RAW, MID, TOP, SIDE]);
    apply_json(p.path(), "dev");
    let (cached, log) = plan_out(p.path(), "dev");
    assert!(
        log.contains("plan answered from the project cache"),
        "{log}"
    );
    std::fs::remove_file(p.path().join(".efmesh/project-cache.json")).unwrap();
    let (full, log) = plan_out(p.path(), "dev");
    assert!(!log.contains("plan answered from the project cache"));
    assert_eq!(cached, full);
    assert_eq!(full["hasChanges"], false);
    // another environment does not serve these versions: the cache does not answer
    let (prod, _) = plan_out(p.path(), "prod");
    assert_eq!(prod["hasChanges"], true);
    // a no-op apply takes the same path
    let out = efmesh(p.path())
        .args(["apply", "dev", "--json"])
        .assert()
        .success();
    assert_eq!(json(&out.get_output().stdout)["applied"], true);
}

#[test]
fn any_input_change_misses_the_project_cache() {
    let seed = ("models/seed.sql", "MODEL (name s.seed, kind SEED (path '../seeds/s.csv'), columns (k VARCHAR), audits (mine));");
    let audit = (
        "audits/mine.sql",
        "AUDIT (name mine);\nSELECT * FROM @this_model WHERE k IS NULL",
    );
    let p = project(&[RAW, MID, seed, audit, ("seeds/s.csv", "k\na\n")]);
    apply_json(p.path(), "dev");
    assert_eq!(plan_out(p.path(), "dev").0["hasChanges"], false);
    // a model edit
    write(
        p.path(),
        (
            "models/mid.sql",
            "MODEL (name s.mid, kind FULL);\nSELECT id, v FROM s.raw WHERE id < 4",
        ),
    );
    assert_eq!(plan_out(p.path(), "dev").0["hasChanges"], true);
    write(p.path(), MID);
    let (v, log) = plan_out(p.path(), "dev");
    assert_eq!(v["hasChanges"], false);
    assert!(
        !log.contains("from the project cache"),
        "the reverted file is new to the cache"
    );
    // a seed edit
    write(p.path(), ("seeds/s.csv", "k\nb\n"));
    assert_eq!(plan_out(p.path(), "dev").0["hasChanges"], true);
    write(p.path(), ("seeds/s.csv", "k\na\n"));
    assert_eq!(plan_out(p.path(), "dev").0["hasChanges"], false);
    // an audit file the project needs goes away: an error, never "no changes"
    std::fs::remove_file(p.path().join("audits/mine.sql")).unwrap();
    efmesh(p.path())
        .args(["plan", "dev"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unknown audit `mine`"));
    // a garbled cache is ignored
    write(p.path(), audit);
    std::fs::write(p.path().join(".efmesh/project-cache.json"), "{not json").unwrap();
    assert_eq!(plan_out(p.path(), "dev").0["hasChanges"], false);
}

#[test]
fn a_no_op_plan_trusts_an_unchanged_stat_and_never_a_rewritten_file() {
    const NO_READ: &str = "every file as stamped, none read";
    const TEXTS: &str = "the texts are unchanged";
    let p = project(&[RAW, MID, TOP, SIDE]);
    apply_json(p.path(), "dev");
    // files written a moment ago could change again within their clock tick: texts decide
    let (_, log) = plan_out(p.path(), "dev");
    assert!(log.contains(TEXTS) && !log.contains(NO_READ), "{log}");
    std::thread::sleep(std::time::Duration::from_millis(2200));
    // aged now: this plan still reads (the stamps were racy) and stamps again ...
    let (_, log) = plan_out(p.path(), "dev");
    assert!(log.contains(TEXTS), "{log}");
    // ... so the next one reads no file, with the same answer
    let (v, log) = plan_out(p.path(), "dev");
    assert!(log.contains(NO_READ), "{log}");
    assert_eq!(v["hasChanges"], false);
    // the same size and modification time, another text: the change time gives it away
    let mid = p.path().join("models/mid.sql");
    let mtime = std::fs::metadata(&mid).unwrap().modified().unwrap();
    let edited = MID.1.replace("id < 8", "id < 3");
    assert_ne!(edited, MID.1);
    assert_eq!(edited.len(), MID.1.len());
    std::fs::write(&mid, &edited).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&mid)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(std::fs::metadata(&mid).unwrap().modified().unwrap(), mtime);
    let (v, log) = plan_out(p.path(), "dev");
    assert!(!log.contains(NO_READ), "{log}");
    assert_eq!(v["hasChanges"], true);
    write(p.path(), MID);
    std::thread::sleep(std::time::Duration::from_millis(2200));
    let (v, _) = plan_out(p.path(), "dev");
    assert_eq!(v["hasChanges"], false);
    assert!(plan_out(p.path(), "dev").1.contains(NO_READ));
    // a new file the globs select is not in the stamps
    write(
        p.path(),
        (
            "models/extra.sql",
            "MODEL (name s.extra, kind VIEW);
SELECT 1 AS x",
        ),
    );
    let (v, log) = plan_out(p.path(), "dev");
    assert!(!log.contains(NO_READ), "{log}");
    assert_eq!(v["hasChanges"], true);
}

#[test]
fn an_apply_that_cannot_load_its_models_creates_no_database() {
    // the engine opens while the models parse; opening a file that is not there would make it
    let p = project(&[
        RAW,
        (
            "models/mid.sql",
            "MODEL (name s.mid, kind FULL);\nSELECT id, v FROM s.rwa",
        ),
    ]);
    efmesh(p.path())
        .args(["apply", "dev", "--yes"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("s.rwa"));
    let db = p.path().join("efmesh.duckdb");
    assert!(!db.exists(), "{} was created", db.display());
    // with the file there, a failed load leaves it as it was and the next apply works
    let p = project(&[RAW, MID]);
    apply_json(p.path(), "dev");
    assert!(p.path().join("efmesh.duckdb").exists());
    write(
        p.path(),
        (
            "models/mid.sql",
            "MODEL (name s.mid, kind FULL);\nSELECT id, v FROM s.rwa",
        ),
    );
    efmesh(p.path())
        .args(["apply", "dev", "--yes"])
        .assert()
        .code(1);
    write(p.path(), MID);
    let v = apply_json(p.path(), "prod");
    assert_eq!(v["applied"], true);
    assert_eq!(one(p.path(), "SELECT count(*)::VARCHAR FROM s.mid"), "8");
}

/// efmesh started under a pseudo-terminal (util-linux `script`), stdin and stdout piped.
fn spawn_at_a_terminal(dir: &Path, args: &str) -> std::process::Child {
    let bin = assert_cmd::cargo::cargo_bin("efmesh");
    std::process::Command::new("script")
        .current_dir(dir)
        .args(["-qec", &format!("{} {args}", bin.display()), "/dev/null"])
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("util-linux `script` runs efmesh under a terminal")
}

/// Run efmesh under a pseudo-terminal, answering the prompt with `answer`.
fn at_a_terminal(dir: &Path, args: &str, answer: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = spawn_at_a_terminal(dir, args);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answer.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn at_a_terminal_apply_asks_and_only_yes_applies() {
    let p = project(&[RAW, MID]);
    let out = at_a_terminal(p.path(), "apply dev --log-level warn", "n\n");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Apply this plan to `dev`? [y/N]"), "{text}");
    assert!(text.contains("apply cancelled"), "{text}");
    assert_eq!(
        plan_out(p.path(), "dev").0["hasChanges"],
        true,
        "nothing was applied"
    );
    let out = at_a_terminal(p.path(), "apply dev --log-level warn", "y\n");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Applied to `dev`"), "{text}");
    assert_eq!(plan_out(p.path(), "dev").0["hasChanges"], false);
}

/// A project applied to dev whose `s.mid` then changes to keep `rows` rows: its next plan
/// looks for missing physics in the engine, and its apply builds one model.
fn applied_then_changed(rows: u32) -> tempfile::TempDir {
    let p = project(&[RAW, MID]);
    apply_json(p.path(), "dev");
    let mid = format!("MODEL (name s.mid, kind FULL);\nSELECT id, v FROM s.raw WHERE id < {rows}");
    write(p.path(), ("models/mid.sql", &mid));
    p
}

#[test]
fn an_apply_opens_the_engine_once_for_its_plan_and_its_build() {
    // the apply builds in the connection its plan opened, instead of opening the file again
    let p = applied_then_changed(3);
    let out = efmesh(p.path())
        .args(["--log-level", "debug", "apply", "dev", "--yes"])
        .env("NO_COLOR", "1")
        .assert()
        .success();
    let log = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(log.contains("looking up physical tables"), "{log}");
    assert_eq!(log.matches("configuring the engine").count(), 1, "{log}");
    assert_eq!(
        one(p.path(), "SELECT count(*)::VARCHAR FROM dev__s.mid"),
        "3"
    );
}

#[test]
fn at_a_terminal_the_database_is_free_while_the_prompt_waits() {
    use std::io::{Read, Write};
    let p = applied_then_changed(4);
    let mut child = spawn_at_a_terminal(p.path(), "apply dev --log-level warn");
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 256];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            if String::from_utf8_lossy(&seen).contains("[y/N]") {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("the prompt appears");
    // the plan looked at the engine; while a person reads it, another process may write
    let other = duckdb::Connection::open(p.path().join("efmesh.duckdb"))
        .expect("the database is not held open during the prompt");
    other
        .execute_batch("CREATE TABLE outside AS SELECT 1 AS x")
        .unwrap();
    drop(other);
    child.stdin.take().unwrap().write_all(b"y\n").unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        one(p.path(), "SELECT count(*)::VARCHAR FROM dev__s.mid"),
        "4"
    );
}

#[test]
fn a_model_that_becomes_embedded_loses_its_view() {
    let p = project(&[RAW, MID, TOP]);
    apply_json(p.path(), "dev");
    write(
        p.path(),
        (
            "models/mid.sql",
            "MODEL (name s.mid, kind EMBEDDED);\nSELECT id, v FROM s.raw WHERE id < 8",
        ),
    );
    let v = apply_json(p.path(), "dev");
    assert_eq!(
        built(&v),
        vec!["s.top"],
        "the consumer inlines the embedded model now"
    );
    assert_eq!(one(p.path(), "SELECT count(*)::VARCHAR FROM information_schema.tables WHERE table_schema = 'dev__s' AND table_name = 'mid'"), "0");
    assert_eq!(one(p.path(), "SELECT n::VARCHAR FROM dev__s.top"), "8");
}

#[test]
fn a_child_rebuilt_later_reads_the_physics_its_unchanged_parent_reuses() {
    let top2 = (
        "models/top2.sql",
        "MODEL (name s.top2, kind FULL);\nSELECT n FROM s.top",
    );
    let p = project(&[RAW, MID, TOP, top2]);
    apply_json(p.path(), "dev");
    // non-breaking: s.top and s.top2 keep their previous physics under new versions
    write(
        p.path(),
        (
            "models/mid.sql",
            "MODEL (name s.mid, kind FULL);\nSELECT id, v, v * 2 AS v2 FROM s.raw WHERE id < 8",
        ),
    );
    assert_eq!(built(&apply_json(p.path(), "dev")), vec!["s.mid"]);
    // now only s.top2 changes: it must read s.top where s.top's data really lives
    write(
        p.path(),
        (
            "models/top2.sql",
            "MODEL (name s.top2, kind FULL);\nSELECT n, n * 10 AS n10 FROM s.top WHERE n > 0",
        ),
    );
    assert_eq!(built(&apply_json(p.path(), "dev")), vec!["s.top2"]);
    assert_eq!(one(p.path(), "SELECT n10::VARCHAR FROM dev__s.top2"), "80");
}

#[test]
fn reclassify_overrides_the_verdict_and_refuses_contradictions() {
    let p = project(&[RAW, MID, TOP]);
    apply_json(p.path(), "dev");
    // a WHERE change is breaking; the operator says non-breaking: s.top keeps its physics
    write(
        p.path(),
        (
            "models/mid.sql",
            "MODEL (name s.mid, kind FULL);\nSELECT id, v FROM s.raw WHERE id < 9",
        ),
    );
    let out = efmesh(p.path())
        .args([
            "apply",
            "dev",
            "--yes",
            "--json",
            "--reclassify",
            "s.mid=non-breaking",
        ])
        .assert()
        .success();
    let v = json(&out.get_output().stdout);
    assert_eq!(built(&v), vec!["s.mid"]);
    let mid = v["plan"]["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["model"] == "s.mid")
        .unwrap()
        .clone();
    assert_eq!(mid["category"], "non-breaking");
    assert!(mid["explain"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e == "reclassified as non-breaking by the operator"));
    let c = rusqlite::Connection::open(p.path().join("efmesh.state.sqlite")).unwrap();
    let summary: String = c
        .query_row(
            "SELECT summary FROM plans ORDER BY id DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        summary.contains(r#""reclassified":[{"category":"non-breaking","model":"s.mid"}]"#),
        "{summary}"
    );
    // appending a column is non-breaking; the operator says breaking: s.top is rebuilt
    write(
        p.path(),
        (
            "models/mid.sql",
            "MODEL (name s.mid, kind FULL);\nSELECT id, v, 1 AS one FROM s.raw WHERE id < 9",
        ),
    );
    let out = efmesh(p.path())
        .args([
            "apply",
            "dev",
            "--yes",
            "--json",
            "--reclassify",
            "s.mid=breaking",
        ])
        .assert()
        .success();
    assert_eq!(
        built(&json(&out.get_output().stdout)),
        vec!["s.mid", "s.top"]
    );
    // calling a dropped column non-breaking is refused
    write(
        p.path(),
        (
            "models/mid.sql",
            "MODEL (name s.mid, kind FULL);\nSELECT id, v FROM s.raw WHERE id < 9",
        ),
    );
    efmesh(p.path())
        .args(["plan", "dev", "--reclassify", "s.mid=non-breaking"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot reclassify `s.mid`: the change removes or rewrites output columns (projection[2] (removed))"));
    efmesh(p.path())
        .args(["plan", "dev", "--reclassify", "s.top=breaking"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not a direct change"));
    efmesh(p.path())
        .args(["plan", "dev", "--reclassify", "s.mid=maybe"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not `breaking` or `non-breaking`"));
}
