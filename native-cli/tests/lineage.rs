//! `efmesh lineage`: column-level lineage on the hospital example, against answers read off
//! its SQL by hand, and the refusals for names that do not exist.

mod common;
use common::*;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

fn lineage(dir: &Path, target: &str) -> Value {
    let out = efmesh(dir)
        .args(["lineage", target, "--json"])
        .assert()
        .success();
    json(&out.get_output().stdout)
}

fn refs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|r| {
            format!(
                "{}.{}",
                r["model"].as_str().unwrap(),
                r["column"].as_str().unwrap()
            )
        })
        .collect()
}

fn node<'a>(l: &'a Value, at: &str) -> &'a Value {
    l["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| {
            format!(
                "{}.{}",
                n["model"].as_str().unwrap(),
                n["column"].as_str().unwrap()
            ) == at
        })
        .unwrap_or_else(|| panic!("{at} not reached in {l:#}"))
}

fn conditions<'a>(l: &'a Value, model: &str) -> &'a Value {
    l["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == model)
        .unwrap_or_else(|| panic!("{model} not on the walk"))
}

#[test]
fn a_column_renamed_through_a_cte_is_traced_to_the_feed() {
    let p = copy_example("hospital");
    // mart.stays: `e.moved_at AS entered_at` inside the CTE `ordered`, then `o.entered_at`
    let l = lineage(p.path(), "mart.stays.entered_at");
    assert_eq!(l["model"], "mart.stays");
    assert_eq!(l["column"], "entered_at");
    assert_eq!(
        refs(&node(&l, "mart.stays.entered_at")["sources"]),
        ["med.moves_enriched.moved_at"]
    );
    assert_eq!(
        refs(&node(&l, "med.moves_enriched.moved_at")["sources"]),
        ["med.moves.moved_at"]
    );
    assert_eq!(
        refs(&node(&l, "med.moves.moved_at")["sources"]),
        ["raw.movements.moved_at"]
    );
    // raw.movements computes moved_at from range(): an origin, with no source
    assert_eq!(refs(&l["origins"]), ["raw.movements.moved_at"]);
    assert_eq!(node(&l, "med.moves_enriched.moved_at")["kind"], "VIEW");
    // med.moves keeps only its interval: moved_at decides its rows
    assert_eq!(
        refs(&conditions(&l, "med.moves")["filters"]),
        ["raw.movements.moved_at"]
    );
    // moves_enriched joins departments on dept_code and the embedded patient_age on patient_id
    assert_eq!(
        refs(&conditions(&l, "med.moves_enriched")["joins"]),
        [
            "med.moves.dept_code",
            "med.moves.patient_id",
            "med.patient_age.patient_id",
            "ref.departments.dept_code"
        ]
    );
    // mart.stays has neither a filter nor a join
    let stays = conditions(&l, "mart.stays");
    assert_eq!(refs(&stays["filters"]), Vec::<String>::new());
    assert_eq!(refs(&stays["joins"]), Vec::<String>::new());

    // the same tree for people
    efmesh(p.path())
        .args(["lineage", "mart.stays.entered_at"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "mart.stays.entered_at  (FULL)\n└── med.moves_enriched.moved_at  (VIEW)\n    └── med.moves.moved_at  (INCREMENTAL_BY_TIME_RANGE)\n        └── raw.movements.moved_at  (FULL, computed here)\n",
        ));
}

#[test]
fn window_inputs_embedded_models_and_seed_columns() {
    let p = copy_example("hospital");
    // stay_hours = date_diff(entered_at, COALESCE(left_at, feed_end)); left_at is
    // LEAD(moved_at) OVER (PARTITION BY patient_id ...), feed_end MAX(moved_at) OVER ()
    let l = lineage(p.path(), "mart.stays.stay_hours");
    assert_eq!(
        refs(&node(&l, "mart.stays.stay_hours")["sources"]),
        [
            "med.moves_enriched.moved_at",
            "med.moves_enriched.patient_id"
        ]
    );
    // age_band comes through the EMBEDDED helper from the birth year
    let l = lineage(p.path(), "mart.stays.age_band");
    assert_eq!(
        refs(&node(&l, "med.moves_enriched.age_band")["sources"]),
        ["med.patient_age.age_band"]
    );
    assert_eq!(node(&l, "med.patient_age.age_band")["kind"], "EMBEDDED");
    assert_eq!(refs(&l["origins"]), ["raw.patients.birth_year"]);
    // a department's name ends at the SEED's column
    let l = lineage(p.path(), "mart.department_load.dept_name");
    assert_eq!(refs(&l["origins"]), ["ref.departments.dept_name"]);
    assert_eq!(node(&l, "ref.departments.dept_name")["kind"], "SEED");
    assert_eq!(
        refs(&conditions(&l, "mart.department_load")["joins"]),
        ["mart.stays.dept_code", "ref.departments.dept_code"]
    );
    // occupancy_ratio reads is_current through the aggregate's FILTER and bed_capacity
    let l = lineage(p.path(), "mart.department_load.occupancy_ratio");
    assert_eq!(
        refs(&node(&l, "mart.department_load.occupancy_ratio")["sources"]),
        [
            "mart.stays.is_current",
            "mart.stays.stay_id",
            "ref.departments.bed_capacity"
        ]
    );
    // mart.stays.is_current is `o.left_at IS NULL`: LEAD over moved_at by patient
    assert_eq!(
        refs(&node(&l, "mart.stays.is_current")["sources"]),
        [
            "med.moves_enriched.moved_at",
            "med.moves_enriched.patient_id"
        ]
    );
}

#[test]
fn a_whole_model_lists_every_column_and_the_filters_of_its_ctes() {
    let p = copy_example("hospital");
    let l = lineage(p.path(), "mart.daily_admissions");
    assert_eq!(l["column"], Value::Null);
    let own: Vec<&str> = l["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["model"] == "mart.daily_admissions")
        .map(|n| n["column"].as_str().unwrap())
        .collect();
    assert_eq!(
        own,
        ["admitted_on", "admissions", "seniors", "via_critical_care"]
    );
    // seniors = COUNT(*) FILTER (WHERE f.age_band = 'senior'), f from the CTE first_stays
    assert_eq!(
        refs(&node(&l, "mart.daily_admissions.seniors")["sources"]),
        ["mart.stays.age_band"]
    );
    // via_critical_care counts c.patient_id from the CTE `critical`
    assert_eq!(
        refs(&node(&l, "mart.daily_admissions.via_critical_care")["sources"]),
        ["mart.stays.patient_id"]
    );
    // the CTEs' WHERE clauses (stay_seq = 1, d.is_critical_care) decide the rows
    let c = conditions(&l, "mart.daily_admissions");
    assert_eq!(
        refs(&c["filters"]),
        ["mart.stays.stay_seq", "ref.departments.is_critical_care"]
    );
    assert_eq!(
        refs(&c["joins"]),
        [
            "mart.stays.dept_code",
            "mart.stays.patient_id",
            "ref.departments.dept_code"
        ]
    );
    insta::assert_json_snapshot!(
        "lineage_json",
        lineage(p.path(), "mart.department_load.bed_capacity")
    );
}

#[test]
fn unknown_models_and_columns_are_refused_with_a_suggestion() {
    let p = copy_example("hospital");
    efmesh(p.path())
        .args(["lineage", "mart.stay.entered_at"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "unknown model `mart.stay.entered_at`",
        ))
        .stderr(predicate::str::contains("did you mean `mart.stays`?"));
    efmesh(p.path())
        .args(["lineage", "mart.stays.entred_at"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "model `mart.stays` has no column `entred_at`",
        ))
        .stderr(predicate::str::contains("did you mean `entered_at`?"));
    let out = efmesh(p.path())
        .args(["lineage", "mart.stays.nope", "--json"])
        .assert()
        .code(1);
    let v = json(&out.get_output().stdout);
    assert_eq!(v["error"]["code"], "argument", "{v:#}");
    assert!(v["error"]["help"]
        .as_str()
        .unwrap()
        .contains("entered_at, left_at"));
}
