//! The planner as a pure function, table-driven: a project applied to an environment (as
//! data), an edited project planned against it, and the actions the plan must contain.

use super::*;
use crate::config::Config;
use crate::interval::Ledger;
use crate::project::{load, ProjectSources, SourceText};
use crate::time::parse_instant;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

const SRC: &str = "MODEL (name src.events, kind EXTERNAL (table raw.events), columns (id INT, ts TIMESTAMP, v INT));";
const A: &str = "MODEL (name m.a, kind FULL);\nSELECT id, v FROM src.events";
const B: &str = "MODEL (name m.b, kind FULL);\nSELECT id, v * 2 AS w FROM m.a";
const T: &str = "MODEL (name m.t, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), start '2026-01-01');\nSELECT id, ts FROM src.events WHERE ts >= @start AND ts < @end";

fn project(models: &[(&str, &str)]) -> Project {
    let sources = ProjectSources {
        config: Config::defaults("t"),
        models: models
            .iter()
            .map(|(name, text)| SourceText {
                path: format!("models/{name}.sql"),
                text: text.to_string(),
            })
            .collect(),
        audits: vec![],
        external_models: vec![],
        macros: vec![],
        config_diagnostics: vec![],
    };
    let loaded = load(&sources, &mut |_| Err("no seeds".into()));
    let errors: Vec<String> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    loaded.project.unwrap()
}

/// An environment's state as the store would hold it after applies.
#[derive(Default)]
struct Env {
    pointers: BTreeMap<String, Pointer>,
    snapshots: HashMap<String, StoredSnapshot>,
    built: HashSet<String>,
    ledgers: HashMap<String, Ledger>,
}

impl Env {
    fn plan(&self, p: &Project, now: &str, options: &PlanOptions) -> Result<Plan, PlanError> {
        plan(
            p,
            "dev",
            PlanState {
                pointers: &self.pointers,
                snapshots: &self.snapshots,
                built: &self.built,
                ledgers: &self.ledgers,
                now: parse_instant(now).unwrap(),
            },
            options,
        )
    }

    /// What applying `plan` leaves in the store: its snapshots, its physics, its batches done,
    /// its pointers.
    fn apply(&mut self, p: &Project, plan: &Plan) {
        for s in &plan.new_snapshots {
            self.snapshots.insert(
                s.fingerprint.clone(),
                StoredSnapshot {
                    fingerprint: s.fingerprint.clone(),
                    name: s.name.clone(),
                    physical_fingerprint: s.physical_fingerprint.clone(),
                    definition_hash: s.definition_hash.clone(),
                    fingerprint_version: s.fingerprint_version,
                    payload: s.payload.clone(),
                },
            );
        }
        for a in &plan.actions {
            if let Some(pfp) = &a.physical_fingerprint {
                self.built.insert(pfp.clone());
                let ledger = self.ledgers.entry(pfp.clone()).or_default();
                for b in &a.batches {
                    ledger.insert(*b);
                }
            }
        }
        self.pointers = plan.pointers_after(p);
    }
}

/// What a case expects of one model's action.
struct Expect {
    model: &'static str,
    category: Category,
    build: bool,
    /// `Some(true)`: its physics is the previous version's (reuse or forward-only).
    keeps_physics: Option<bool>,
    batches: usize,
}

fn expect(model: &'static str, category: Category, build: bool) -> Expect {
    Expect {
        model,
        category,
        build,
        keeps_physics: None,
        batches: 0,
    }
}

struct Case {
    name: &'static str,
    before: Vec<(&'static str, &'static str)>,
    after: Vec<(&'static str, String)>,
    options: PlanOptions,
    expect: Vec<Expect>,
}

const NOW: &str = "2026-01-05T10:00:00Z";

fn base() -> Vec<(&'static str, &'static str)> {
    vec![("src", SRC), ("a", A), ("b", B), ("t", T)]
}

fn edited(edits: &[(&'static str, String)]) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = base()
        .into_iter()
        .map(|(n, t)| (n, t.to_string()))
        .collect();
    for (n, t) in edits {
        match out.iter_mut().find(|(m, _)| m == n) {
            Some(slot) if t.is_empty() => slot.1.clear(),
            Some(slot) => slot.1 = t.clone(),
            None => out.push((n, t.clone())),
        }
    }
    out.retain(|(_, t)| !t.is_empty());
    out
}

fn options(reclassify: &[(&str, Category)], forward_only: &[&str]) -> PlanOptions {
    PlanOptions {
        reclassify: reclassify
            .iter()
            .map(|(m, c)| (m.to_string(), *c))
            .collect(),
        forward_only: forward_only
            .iter()
            .map(|m| m.to_string())
            .collect::<BTreeSet<_>>(),
        ..PlanOptions::default()
    }
}

#[test]
fn missing_physics_is_rebuilt_from_its_whole_history_and_named() {
    let p = project(&base());
    let mut env = Env::default();
    let first = env.plan(&p, NOW, &PlanOptions::default()).unwrap();
    env.apply(&p, &first);
    assert!(!env
        .plan(&p, NOW, &PlanOptions::default())
        .unwrap()
        .has_changes());
    let t = env.pointers["m.t"].physical_fingerprint.clone();
    let mut o = PlanOptions::default();
    o.missing_physics
        .insert(t.clone(), "its manifest is gone".into());
    let plan = env.plan(&p, NOW, &o).unwrap();
    let a = plan.actions.iter().find(|a| a.model == "m.t").unwrap();
    assert_eq!((a.category, a.build), (Category::Unchanged, true));
    // the ledger says done; missing physics holds nothing, so the whole history is due
    assert_eq!(a.batches.len(), 1);
    assert_eq!(a.batches[0].start, parse_instant("2026-01-01").unwrap());
    assert!(a.explain.iter().any(|e| e.contains("its manifest is gone")));
    assert_eq!(plan.missing_physics, vec![t]);
    assert!(plan.warnings.iter().any(|w| w.contains("`m.t`")));
    // the others are untouched
    let b = plan.actions.iter().find(|a| a.model == "m.b").unwrap();
    assert!(!b.build);
}

fn cases() -> Vec<Case> {
    use Category::*;
    vec![
        Case {
            name: "nothing changed",
            before: base(),
            after: edited(&[]),
            options: PlanOptions::default(),
            expect: vec![
                expect("m.a", Unchanged, false),
                expect("m.b", Unchanged, false),
                expect("m.t", Unchanged, false),
            ],
        },
        Case {
            name: "a description is metadata",
            before: base(),
            after: edited(&[("a", A.replace("kind FULL", "kind FULL, description 'd'"))]),
            options: PlanOptions::default(),
            expect: vec![
                expect("m.a", MetadataOnly, false),
                expect("m.b", Unchanged, false),
            ],
        },
        Case {
            name: "batch_size and batch_concurrency are metadata",
            before: base(),
            after: edited(&[(
                "t",
                T.replace(
                    "(time_column ts)",
                    "(time_column ts, batch_size 1, batch_concurrency 2)",
                ),
            )]),
            options: PlanOptions::default(),
            expect: vec![Expect {
                keeps_physics: Some(true),
                ..expect("m.t", MetadataOnly, false)
            }],
        },
        Case {
            name: "a breaking change rebuilds the model and its children",
            before: base(),
            after: edited(&[("a", format!("{A} WHERE v > 0"))]),
            options: PlanOptions::default(),
            expect: vec![
                expect("m.a", Breaking, true),
                Expect {
                    keeps_physics: Some(false),
                    ..expect("m.b", Indirect, true)
                },
            ],
        },
        Case {
            name: "a non-breaking change lets children reuse their physics",
            before: base(),
            after: edited(&[("a", A.replace("SELECT id, v", "SELECT id, v, v + 1 AS v2"))]),
            options: PlanOptions::default(),
            expect: vec![
                expect("m.a", NonBreaking, true),
                Expect {
                    keeps_physics: Some(true),
                    ..expect("m.b", Indirect, false)
                },
            ],
        },
        Case {
            name: "the operator reclassifies a breaking change as non-breaking",
            before: base(),
            after: edited(&[("a", format!("{A} WHERE v > 0"))]),
            options: options(&[("m.a", NonBreaking)], &[]),
            expect: vec![
                expect("m.a", NonBreaking, true),
                Expect {
                    keeps_physics: Some(true),
                    ..expect("m.b", Indirect, false)
                },
            ],
        },
        Case {
            name: "forward-only keeps the physics and history",
            before: base(),
            after: edited(&[("t", T.replace("SELECT id, ts", "SELECT id, ts, 1 AS x"))]),
            options: options(&[], &["m.t"]),
            expect: vec![Expect {
                keeps_physics: Some(true),
                ..expect("m.t", NonBreaking, false)
            }],
        },
        Case {
            name: "a model no longer in the project is removed",
            before: base(),
            after: edited(&[("b", String::new())]),
            options: PlanOptions::default(),
            expect: vec![
                expect("m.a", Unchanged, false),
                expect("m.b", Removed, false),
            ],
        },
        Case {
            name: "a new model is added and built",
            before: base(),
            after: edited(&[(
                "c",
                "MODEL (name m.c, kind VIEW);\nSELECT id FROM m.b".into(),
            )]),
            options: PlanOptions::default(),
            expect: vec![expect("m.c", Added, true)],
        },
        Case {
            name: "a new day is one batch of an unchanged model",
            before: base(),
            after: edited(&[]),
            options: PlanOptions::default(),
            // planned at NOW, then again a day later (see `run`)
            expect: vec![Expect {
                batches: 1,
                ..expect("m.t", Unchanged, false)
            }],
        },
    ]
}

/// Apply `case.before` to a fresh environment, then plan `case.after` against it; the plan,
/// and the physics each model was served from before.
fn run(case: &Case) -> Result<(Plan, BTreeMap<String, String>), PlanError> {
    let mut env = Env::default();
    let before = project(&case.before);
    let first = env.plan(&before, NOW, &PlanOptions::default()).unwrap();
    env.apply(&before, &first);
    let served: BTreeMap<String, String> = env
        .pointers
        .iter()
        .map(|(m, p)| (m.clone(), p.physical_fingerprint.clone()))
        .collect();
    let refs: Vec<(&str, &str)> = case.after.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let after = project(&refs);
    let now = if case.name.starts_with("a new day") {
        "2026-01-06T10:00:00Z"
    } else {
        NOW
    };
    env.plan(&after, now, &case.options).map(|p| (p, served))
}

#[test]
fn plans_are_the_expected_diff_for_every_case() {
    for case in cases() {
        let (plan, served) = run(&case).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        for e in &case.expect {
            let a = plan
                .actions
                .iter()
                .find(|a| a.model == e.model)
                .unwrap_or_else(|| panic!("{}: no action for {}", case.name, e.model));
            assert_eq!(
                a.category, e.category,
                "{}: {} {:?}",
                case.name, e.model, a.explain
            );
            assert_eq!(a.build, e.build, "{}: {} build", case.name, e.model);
            assert_eq!(
                a.batches.len(),
                e.batches,
                "{}: {} batches",
                case.name,
                e.model
            );
            if let Some(keeps) = e.keeps_physics {
                assert_eq!(
                    a.physical_fingerprint.as_ref() == served.get(e.model),
                    keeps,
                    "{}: {} keeps its physics",
                    case.name,
                    e.model
                );
            }
        }
        if case.name == "nothing changed" {
            assert!(!plan.has_changes());
        }
    }
}

#[test]
fn overrides_that_contradict_the_definitions_are_refused() {
    let refused = |after: Vec<(&'static str, String)>, options: PlanOptions| {
        run(&Case {
            name: "refused",
            before: base(),
            after,
            options,
            expect: vec![],
        })
        .err()
    };
    // dropping a column is never non-breaking
    let e = refused(
        edited(&[
            ("a", A.replace("SELECT id, v", "SELECT id")),
            ("b", String::new()),
        ]),
        options(&[("m.a", Category::NonBreaking)], &[]),
    );
    assert!(
        matches!(e, Some(PlanError::Reclassify { ref reason, .. }) if reason.contains("removes or rewrites")),
        "{e:?}"
    );
    // only direct changes can be reclassified
    let e = refused(edited(&[]), options(&[("m.a", Category::Breaking)], &[]));
    assert!(
        matches!(e, Some(PlanError::Reclassify { ref reason, .. }) if reason.contains("unchanged here")),
        "{e:?}"
    );
    // a VIEW has no history to keep
    let e = refused(
        edited(&[("b", B.replace("kind FULL", "kind VIEW"))]),
        options(&[], &["m.b"]),
    );
    assert!(matches!(e, Some(PlanError::ForwardOnly { .. })), "{e:?}");
    // an unknown name
    let e = refused(edited(&[]), options(&[], &["m.nope"]));
    assert!(
        matches!(e, Some(PlanError::Reclassify { ref reason, .. }) if reason.contains("no such model")),
        "{e:?}"
    );
}

#[test]
fn a_new_environment_backfills_from_start_in_batches() {
    let p = project(&[
        ("src", SRC),
        (
            "t",
            &T.replace("(time_column ts)", "(time_column ts, batch_size 2)"),
        ),
    ]);
    let plan = Env::default()
        .plan(&p, NOW, &PlanOptions::default())
        .unwrap();
    let t = plan.actions.iter().find(|a| a.model == "m.t").unwrap();
    let days: Vec<String> = t
        .batches
        .iter()
        .map(|b| format!("{}..{}", b.start.format("%d"), b.end.format("%d")))
        .collect();
    assert_eq!(
        days,
        ["01..03", "03..05"],
        "four complete days before NOW, two per batch"
    );
    assert!(t.build && t.category == Category::Added);
}
