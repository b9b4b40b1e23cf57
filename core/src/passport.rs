//! The passport: what a model's data may be believed to answer.
//!
//! Part is declared by the model's owner (`answerable`, `caveats`); part is derived from the
//! interval ledger and never declared (how far the history is complete). A consumer needs the
//! *effective* passport: a mart is no more complete, and no more answerable, than the worst of
//! what it reads. [`effective`] narrows each model by its ancestors and names the model that
//! imposed each limit, so "complete through March 3" comes with "because of `raw.feed`".
//!
//! Feature-free: the browser computes and checks the same values from manifests.

use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

/// What the model's data may be believed to answer, as its owner declares it. Ordered from
/// best to worst, so the effective value is the maximum.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, PartialOrd, Ord, Hash,
)]
#[serde(rename_all = "lowercase")]
pub enum Answerable {
    /// The data is complete for what it describes (the default).
    #[default]
    Full,
    /// The data holds only part of what it describes, so totals and counts understate reality.
    Sampled,
    /// The data cannot be believed to answer questions about what it describes.
    Unobservable,
}

impl Answerable {
    /// The word used in model files and manifests.
    pub fn label(self) -> &'static str {
        match self {
            Answerable::Full => "full",
            Answerable::Sampled => "sampled",
            Answerable::Unobservable => "unobservable",
        }
    }
}

/// A caveat with the model that declared it, so an inherited limitation can be traced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
pub struct Caveat {
    /// The model that declared it.
    pub model: String,
    /// The caveat, in its owner's words.
    pub text: String,
}

/// The passport a consumer should believe: the model's own, narrowed by every ancestor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Effective {
    /// The worst `answerable` over the model and its ancestors.
    pub answerable: Answerable,
    /// The model that declared that value; `None` when everything is `full`.
    // present even when null: the schema requires it
    #[serde(deserialize_with = "Option::deserialize")]
    pub answerable_limited_by: Option<String>,
    /// The data is complete before this instant (ISO 8601, exclusive): the earliest contiguous
    /// coverage over the time-range models among the model and its ancestors. `None` with
    /// `limited_by` set: that model has computed nothing yet. `None` with `limited_by` unset:
    /// nothing upstream has time semantics, so there is no coverage claim to make.
    // present even when null: the schema requires it
    #[serde(deserialize_with = "Option::deserialize")]
    pub complete_through: Option<String>,
    /// The time-range model whose coverage sets `complete_through`.
    // present even when null: the schema requires it
    #[serde(deserialize_with = "Option::deserialize")]
    pub limited_by: Option<String>,
    /// Every caveat of the model and its ancestors, with who declared it.
    pub caveats: Vec<Caveat>,
}

/// One model as [`effective`] sees it.
#[derive(Debug, Clone)]
pub struct Node<'a> {
    /// The model's name.
    pub name: &'a str,
    /// Its declared `answerable`.
    pub answerable: Answerable,
    /// Its declared caveats.
    pub caveats: &'a [String],
    /// `Some` for a time-range model: how far its own history is complete (`None` inside: it
    /// has computed nothing). `None` for every other kind, which carries no claim of its own.
    pub coverage: Option<Option<NaiveDateTime>>,
    /// Indices of its parents in the same slice.
    pub parents: Vec<usize>,
}

/// The ISO form passports and manifests use for instants.
pub fn iso(t: NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The effective passport of every node, visiting them in `order` (parents first).
pub fn effective(nodes: &[Node], order: &[usize]) -> Vec<Effective> {
    // per node: the binding coverage claim (through, by) and the worst answerable (value, by)
    let mut claim: Vec<Option<(Option<NaiveDateTime>, String)>> = vec![None; nodes.len()];
    let mut worst: Vec<(Answerable, Option<String>)> = vec![(Answerable::Full, None); nodes.len()];
    let mut caveats: Vec<Vec<Caveat>> = vec![vec![]; nodes.len()];
    for &i in order {
        let n = &nodes[i];
        let mut c: Option<(Option<NaiveDateTime>, String)> =
            n.coverage.map(|through| (through, n.name.to_string()));
        // the model's own declaration binds first; an ancestor replaces it only when worse
        let mut w = (
            n.answerable,
            (n.answerable != Answerable::Full).then(|| n.name.to_string()),
        );
        let mut cav: Vec<Caveat> = n
            .caveats
            .iter()
            .map(|t| Caveat {
                model: n.name.into(),
                text: t.clone(),
            })
            .collect();
        for &p in &n.parents {
            if let Some((through, by)) = &claim[p] {
                let earlier = match (&c, through) {
                    (None, _) => true,
                    (Some((None, _)), _) => false,
                    (Some((Some(_), _)), None) => true,
                    (Some((Some(mine), _)), Some(theirs)) => theirs < mine,
                };
                if earlier {
                    c = Some((*through, by.clone()));
                }
            }
            if worst[p].0 > w.0 {
                w = worst[p].clone();
            }
            for x in &caveats[p] {
                if !cav.contains(x) {
                    cav.push(x.clone());
                }
            }
        }
        claim[i] = c;
        worst[i] = w;
        caveats[i] = cav;
    }
    (0..nodes.len())
        .map(|i| Effective {
            answerable: worst[i].0,
            answerable_limited_by: worst[i].1.clone(),
            complete_through: claim[i].as_ref().and_then(|(t, _)| t.map(iso)),
            limited_by: claim[i].as_ref().map(|(_, by)| by.clone()),
            caveats: caveats[i].clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(d: &str) -> NaiveDateTime {
        chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap()
    }

    #[test]
    fn a_mart_is_narrowed_to_its_stalest_time_range_ancestor() {
        let none: &[String] = &[];
        let sampled = vec!["only ward A".to_string()];
        // 0 seed (no time), 1 fresh feed, 2 stale feed (sampled), 3 mart over all, 4 dim over 0
        let nodes = vec![
            Node {
                name: "ref.seed",
                answerable: Answerable::Full,
                caveats: none,
                coverage: None,
                parents: vec![],
            },
            Node {
                name: "raw.fresh",
                answerable: Answerable::Full,
                caveats: none,
                coverage: Some(Some(at("2026-03-10"))),
                parents: vec![],
            },
            Node {
                name: "raw.stale",
                answerable: Answerable::Sampled,
                caveats: &sampled,
                coverage: Some(Some(at("2026-03-03"))),
                parents: vec![],
            },
            Node {
                name: "mart.m",
                answerable: Answerable::Full,
                caveats: none,
                coverage: None,
                parents: vec![0, 1, 2],
            },
            Node {
                name: "mart.dim",
                answerable: Answerable::Full,
                caveats: none,
                coverage: None,
                parents: vec![0],
            },
            Node {
                name: "raw.empty",
                answerable: Answerable::Full,
                caveats: none,
                coverage: Some(None),
                parents: vec![],
            },
            Node {
                name: "mart.late",
                answerable: Answerable::Unobservable,
                caveats: none,
                coverage: None,
                parents: vec![3, 5],
            },
        ];
        let e = effective(&nodes, &[0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(
            e[3].complete_through.as_deref(),
            Some("2026-03-03T00:00:00Z")
        );
        assert_eq!(e[3].limited_by.as_deref(), Some("raw.stale"));
        assert_eq!(e[3].answerable, Answerable::Sampled);
        assert_eq!(e[3].answerable_limited_by.as_deref(), Some("raw.stale"));
        assert_eq!(
            e[3].caveats,
            vec![Caveat {
                model: "raw.stale".into(),
                text: "only ward A".into()
            }]
        );
        // nothing upstream has time semantics: no claim, nobody to blame
        assert_eq!(
            (e[4].complete_through.clone(), e[4].limited_by.clone()),
            (None, None)
        );
        assert_eq!(e[4].answerable_limited_by, None);
        // an ancestor that computed nothing makes the claim null and names it
        assert_eq!(e[6].complete_through, None);
        assert_eq!(e[6].limited_by.as_deref(), Some("raw.empty"));
        assert_eq!(e[6].answerable, Answerable::Unobservable);
        assert_eq!(e[6].answerable_limited_by.as_deref(), Some("mart.late"));
    }
}
