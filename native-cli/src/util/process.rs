//! Whether a process of this host still exists: a lock whose holder is gone is reclaimed at
//! once, and temporary files a killed run left behind are removed by the next run.

/// Whether process `pid` exists on this host, from `/proc` (Linux). Elsewhere every pid is
/// taken to exist, so nothing is ever reclaimed or removed early. A pid reused by another
/// process counts as alive: the caller then waits for the lease or leaves the file.
pub fn exists(pid: u32) -> bool {
    let proc_fs = std::path::Path::new("/proc/self");
    if !proc_fs.exists() {
        return true;
    }
    pid == std::process::id() || std::path::Path::new("/proc").join(pid.to_string()).exists()
}

/// Whether `name` is a temporary file of efmesh's (a scratch data file `.data-<pid>-<n>…tmp`
/// or an atomic write's `.<file>.tmp-<pid>`) whose writer no longer exists on this host.
pub fn left_by_dead_process(name: &str) -> bool {
    let pid = if let Some(rest) = name.strip_prefix(".data-") {
        rest.split('-').next()
    } else if name.starts_with('.') {
        name.rsplit_once(".tmp-").map(|(_, pid)| pid)
    } else {
        None
    };
    pid.and_then(|p| p.parse::<u32>().ok())
        .is_some_and(|pid| !exists(pid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_temporary_names_of_gone_processes_qualify() {
        // pid 4194305 is above Linux's pid_max, so it never exists
        assert!(left_by_dead_process(".data-4194305-17.parquet.tmp"));
        assert!(left_by_dead_process(".manifest.json.tmp-4194305"));
        let me = std::process::id();
        assert!(!left_by_dead_process(&format!(".data-{me}-17.parquet.tmp")));
        assert!(!left_by_dead_process(&format!(".manifest.json.tmp-{me}")));
        assert!(!left_by_dead_process("manifest.json"));
        assert!(!left_by_dead_process("part-4194305.parquet"));
    }
}
