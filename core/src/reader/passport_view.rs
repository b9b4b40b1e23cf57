//! The passport a consumer should show next to the data of one manifest.

use crate::manifest::Manifest;
use crate::passport::{Answerable, Caveat};
use serde::Serialize;

/// What a manifest's data may be believed to answer, in the shape a UI renders. It is the
/// effective passport (narrowed by every ancestor) when the manifest carries one, and the
/// model's own declaration otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PassportView {
    /// The model the manifest describes.
    pub model: String,
    /// The worst `answerable` over the model and its ancestors.
    pub answerable: Answerable,
    /// Who declared that value (`None` when everything is `full`).
    pub answerable_limited_by: Option<String>,
    /// Every caveat, with the model that declared it.
    pub caveats: Vec<Caveat>,
    /// The data is complete before this instant (exclusive), or `None`.
    pub complete_through: Option<String>,
    /// The time-range model that sets `complete_through`; set with a `None` instant, it has
    /// computed nothing yet.
    pub limited_by: Option<String>,
    /// The version's own history has holes: failed intervals, done intervals beyond a missing
    /// one, or done intervals without the first. A total over such data is partial.
    pub has_gaps: bool,
    /// True when `effective` was absent and the view is the declared half only.
    pub declared_only: bool,
}

/// The passport of `m`.
pub fn passport_of(m: &Manifest) -> PassportView {
    let fr = &m.freshness;
    let has_gaps = !fr.failed_intervals.is_empty()
        || m.intervals.len() > 1
        || (fr.contiguous_through.is_none() && !m.intervals.is_empty());
    match &m.effective {
        Some(e) => PassportView {
            model: m.model.clone(),
            answerable: e.answerable,
            answerable_limited_by: e.answerable_limited_by.clone(),
            caveats: e.caveats.clone(),
            complete_through: e.complete_through.clone(),
            limited_by: e.limited_by.clone(),
            has_gaps,
            declared_only: false,
        },
        None => {
            let time_range = m.kind == "INCREMENTAL_BY_TIME_RANGE";
            PassportView {
                model: m.model.clone(),
                answerable: m.answerable,
                answerable_limited_by: (m.answerable != Answerable::Full).then(|| m.model.clone()),
                caveats: m
                    .caveats
                    .iter()
                    .map(|t| Caveat {
                        model: m.model.clone(),
                        text: t.clone(),
                    })
                    .collect(),
                complete_through: if time_range {
                    fr.contiguous_through.clone()
                } else {
                    None
                },
                limited_by: time_range.then(|| m.model.clone()),
                has_gaps,
                declared_only: true,
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::manifest::{Freshness, ManifestInterval, MANIFEST_VERSION};
    use crate::passport::Effective;

    pub(crate) fn iv(a: &str, b: &str) -> ManifestInterval {
        ManifestInterval {
            start: format!("2026-01-{a}T00:00:00Z"),
            end: format!("2026-01-{b}T00:00:00Z"),
        }
    }

    /// A time-range manifest complete through Jan 3, with the given done ranges and failures.
    pub(crate) fn manifest(
        intervals: Vec<ManifestInterval>,
        failed: Vec<ManifestInterval>,
    ) -> Manifest {
        Manifest {
            manifest_version: MANIFEST_VERSION,
            model: "raw.feed".into(),
            fingerprint: "0123456789abcdef0123456789abcdef".into(),
            kind: "INCREMENTAL_BY_TIME_RANGE".into(),
            files: vec![],
            schema: vec![],
            freshness: Freshness {
                contiguous_through: intervals.first().map(|i| i.end.clone()),
                latest_interval: None,
                failed_intervals: failed,
                history_end: None,
            },
            intervals,
            answerable: Answerable::Sampled,
            caveats: vec!["ward A only".into()],
            effective: None,
            redacted: vec![],
            generated_at: "2026-01-05T00:00:00Z".into(),
        }
    }

    #[test]
    fn effective_wins_and_declared_is_the_fallback() {
        let mut m = manifest(vec![iv("01", "03")], vec![]);
        let declared = passport_of(&m);
        assert!(declared.declared_only && !declared.has_gaps);
        assert_eq!(declared.answerable, Answerable::Sampled);
        assert_eq!(declared.answerable_limited_by.as_deref(), Some("raw.feed"));
        assert_eq!(
            declared.complete_through.as_deref(),
            Some("2026-01-03T00:00:00Z")
        );
        assert_eq!(declared.caveats[0].model, "raw.feed");
        m.effective = Some(Effective {
            answerable: Answerable::Unobservable,
            answerable_limited_by: Some("raw.up".into()),
            complete_through: Some("2026-01-02T00:00:00Z".into()),
            limited_by: Some("raw.up".into()),
            caveats: vec![],
        });
        let eff = passport_of(&m);
        assert!(!eff.declared_only);
        assert_eq!(eff.answerable, Answerable::Unobservable);
        assert_eq!(eff.limited_by.as_deref(), Some("raw.up"));
        assert_eq!(
            eff.complete_through.as_deref(),
            Some("2026-01-02T00:00:00Z")
        );
    }

    #[test]
    fn holes_failures_and_a_missing_head_are_gaps() {
        assert!(passport_of(&manifest(vec![iv("01", "03"), iv("04", "06")], vec![])).has_gaps);
        assert!(passport_of(&manifest(vec![iv("01", "03")], vec![iv("03", "04")])).has_gaps);
        let mut head = manifest(vec![iv("02", "03")], vec![]);
        head.freshness.contiguous_through = None;
        assert!(passport_of(&head).has_gaps);
        assert!(!passport_of(&manifest(vec![], vec![])).has_gaps);
    }
}
