//! "Did you mean …?" — the closest known name to a misspelled one.

/// The candidate closest to `wanted` by edit distance, if it is close enough to be a plausible
/// typo (at most a third of the name, and at least one edit, may differ).
pub fn closest<'a, I>(wanted: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = &'a str>,
{
    let wanted_l = wanted.to_ascii_lowercase();
    let budget = (wanted_l.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::damerau_levenshtein(&wanted_l, &c.to_ascii_lowercase()),
                c,
            )
        })
        .filter(|(d, _)| *d <= budget)
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)))
        .map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_typos_but_not_strangers() {
        let names = ["case_id", "moved_at", "dept"];
        assert_eq!(
            super::closest("case_idd", names).as_deref(),
            Some("case_id")
        );
        assert_eq!(
            super::closest("moved_ta", names).as_deref(),
            Some("moved_at")
        );
        assert_eq!(super::closest("revenue", names), None);
    }
}
