//! Absolute file URLs from a manifest's relative paths.
//!
//! A browser cannot list a folder over HTTP, so a reader resolves the manifest's file list
//! against the URL it fetched the manifest from. The manifest's paths are plain file paths
//! (validated to stay inside its folder); each segment is percent-encoded here so a `#`, `?`,
//! `%` or space in a partition value cannot change what the URL means.

use crate::manifest::Manifest;

/// The URL of each file of `m`, in manifest order, relative to `manifest_url` the way a
/// browser resolves a relative link: the manifest's own name, query and fragment are dropped.
/// A relative `manifest_url` gives URLs relative to the same place.
pub fn resolve_files(manifest_url: &str, m: &Manifest) -> Vec<String> {
    let base = base_of(manifest_url);
    m.files
        .iter()
        .map(|f| {
            let path: Vec<String> = f.path.split('/').map(encode_segment).collect();
            format!("{base}{}", path.join("/"))
        })
        .collect()
}

/// Everything up to and including the last `/` of the URL's path.
fn base_of(url: &str) -> String {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    let url = &url[..end];
    // never cut into `scheme://host` when the URL has no path
    let path_start = url.find("://").map(|i| i + 3).unwrap_or(0);
    match url[path_start..].rfind('/') {
        Some(i) => url[..path_start + i + 1].to_string(),
        None if path_start > 0 => format!("{url}/"),
        None => String::new(),
    }
}

/// Percent-encode what a URL path segment cannot hold literally.
fn encode_segment(seg: &str) -> String {
    let mut out = String::with_capacity(seg.len());
    for b in seg.bytes() {
        let keep = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b);
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::ManifestFile;
    use crate::reader::passport_view::tests::manifest;

    fn with_files(paths: &[&str]) -> Manifest {
        let mut m = manifest(vec![], vec![]);
        m.files = paths
            .iter()
            .map(|p| ManifestFile {
                path: p.to_string(),
                bytes: 1,
                rows: 1,
                interval: None,
            })
            .collect();
        m
    }

    #[test]
    fn paths_resolve_against_the_manifest_folder() {
        let m = with_files(&[
            "interval=20260101T000000Z/data-1a2b3c4d.parquet",
            "a b#?%.parquet",
        ]);
        assert_eq!(
            resolve_files("https://cdn.example/lake/med/moves/fp=1a2b3c4d/manifest.json?v=3#x", &m),
            vec![
                "https://cdn.example/lake/med/moves/fp=1a2b3c4d/interval=20260101T000000Z/data-1a2b3c4d.parquet",
                "https://cdn.example/lake/med/moves/fp=1a2b3c4d/a%20b%23%3F%25.parquet",
            ]
        );
        assert_eq!(
            resolve_files("lake/m/t/manifest.json", &m)[0],
            "lake/m/t/interval=20260101T000000Z/data-1a2b3c4d.parquet"
        );
        assert_eq!(
            resolve_files("manifest.json", &m)[1],
            "a%20b%23%3F%25.parquet"
        );
        assert_eq!(
            resolve_files("http://host", &m)[0],
            "http://host/interval=20260101T000000Z/data-1a2b3c4d.parquet"
        );
    }
}
