//! PostgreSQL connection URLs: where a server is, said without its password.
//!
//! The state store and the engine both take a URL that may carry a password; everything they
//! report (errors, logs, `Debug`) goes through [`Redact`] so the password never reaches a
//! terminal or a log file.

/// Scrubs the password (and the URL that carries it) from anything a PostgreSQL connection
/// reports, so no error, log line or `Debug` output of the state store or the engine leaks it.
#[derive(Clone)]
pub struct Redact {
    /// The URL without its password.
    pub location: String,
    /// The URL as configured; shown as `location` wherever it is echoed.
    url: String,
    /// Passwords (decoded and as written in the URL), longest first.
    secrets: Vec<String>,
}

impl Redact {
    pub fn new(url: &str, config: Option<&postgres::Config>) -> Redact {
        let mut secrets = vec![];
        if let Some(p) = config.and_then(|c| c.get_password()) {
            secrets.push(String::from_utf8_lossy(p).into_owned());
        }
        if let Some(raw) = raw_password(url) {
            secrets.push(raw.to_string());
        }
        secrets.retain(|s| !s.is_empty());
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        let location = match config {
            Some(c) => location_of(c),
            None => scrub_url(url),
        };
        Redact {
            location,
            url: url.to_string(),
            secrets,
        }
    }

    pub fn scrub(&self, message: &str) -> String {
        let mut out = message.replace(&self.url, &self.location);
        for s in &self.secrets {
            out = out.replace(s.as_str(), "<redacted>");
        }
        out
    }
}

/// `postgres://user@host:port/db`: where the store is, without its password.
fn location_of(c: &postgres::Config) -> String {
    let hosts: Vec<String> = c
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let host = match h {
                postgres::config::Host::Tcp(h) => h.clone(),
                #[cfg(unix)]
                postgres::config::Host::Unix(p) => p.display().to_string(),
            };
            match c.get_ports().get(i).or(c.get_ports().first()) {
                Some(port) => format!("{host}:{port}"),
                None => host,
            }
        })
        .collect();
    let user = c.get_user().map(|u| format!("{u}@")).unwrap_or_default();
    let db = c.get_dbname().unwrap_or_default();
    format!("postgres://{user}{}/{db}", hosts.join(","))
}

/// The password as written in a `postgres://user:password@host` URL (still percent-encoded).
fn raw_password(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?']).next()?;
    let (userinfo, _) = authority.rsplit_once('@')?;
    userinfo.split_once(':').map(|(_, p)| p)
}

/// A URL that could not be parsed, with whatever looks like its password removed.
pub fn scrub_url(url: &str) -> String {
    match raw_password(url) {
        Some(p) if !p.is_empty() => url.replacen(&format!(":{p}@"), "@", 1),
        _ if url.contains("password") => "<a connection string>".into(),
        _ => url.to_string(),
    }
}

/// What went wrong, with the server's own message (`postgres::Error`'s `Display` alone says
/// only "db error").
pub fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.to_string();
    }
    let mut out = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// Hands the connection errors an r2d2 pool meets to the log, scrubbed, instead of r2d2's
/// default handler, which would print them unredacted through `log`. Both the state store's
/// pool and the engine's use it.
pub struct PoolErrors {
    /// Scrubs the password from each message.
    pub redact: std::sync::Arc<Redact>,
    /// Whose pool it is (`state`, `engine`), for the log line.
    pub role: &'static str,
}

impl std::fmt::Debug for PoolErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolErrors")
            .field("location", &self.redact.location)
            .field("role", &self.role)
            .finish()
    }
}

impl r2d2::HandleError<postgres::Error> for PoolErrors {
    fn handle_error(&self, error: postgres::Error) {
        tracing::debug!(
            location = %self.redact.location,
            role = self.role,
            "PostgreSQL connection failed: {}",
            self.redact.scrub(&describe(&error))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_location_and_messages_never_show_the_password() {
        let url = "postgres://u:s%40cret@db.example:6432/state";
        let config: postgres::Config = url.parse().unwrap();
        let r = Redact::new(url, Some(&config));
        assert_eq!(r.location, "postgres://u@db.example:6432/state");
        let said = r.scrub(&format!("cannot use {url}: bad s@cret, raw s%40cret"));
        assert!(
            !said.contains("s@cret") && !said.contains("s%40cret"),
            "{said}"
        );
        assert!(
            said.contains("postgres://u@db.example:6432/state"),
            "{said}"
        );
        let kv = "host=h port=1 user=u password=hunter2 dbname=d";
        let r = Redact::new(kv, Some(&kv.parse().unwrap()));
        assert_eq!(r.location, "postgres://u@h:1/d");
        assert!(!r.scrub("password hunter2").contains("hunter2"));
        assert_eq!(scrub_url("postgres://u:pw@h/d?x"), "postgres://u@h/d?x");
    }
}
