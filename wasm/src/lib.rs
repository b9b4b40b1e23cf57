//! efmesh-wasm: the lake reader of `efmesh-core`, exported to JavaScript.
//!
//! A browser page or an edge function needs the manifest, the passport and a freshness verdict
//! in the same words the native CLI uses, so this crate adds no logic of its own: each export
//! converts JavaScript values to core types, calls `efmesh_core::reader` or
//! `efmesh_core::manifest`, and converts the answer back. Errors become JavaScript `Error`s whose
//! `code` says what went wrong (`EFMESH_MANIFEST_NEWER`, `EFMESH_MANIFEST_INVALID`,
//! `EFMESH_BAD_ARGUMENT`).
//!
//! The package's JS wrapper (`js/`) is the supported entry point; these exports are its engine.

use efmesh_core::manifest::{Manifest, ManifestError};
use efmesh_core::reader;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The manifest format this reader understands; newer manifests are refused.
#[wasm_bindgen(js_name = MANIFEST_VERSION)]
pub fn manifest_version() -> u32 {
    efmesh_core::manifest::MANIFEST_VERSION
}

/// The efmesh version this reader was built from.
#[wasm_bindgen(js_name = PACKAGE_VERSION)]
pub fn package_version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Validate a manifest given as JSON text or as a parsed object, and return it as a plain
/// object. Throws when it is malformed or newer than this reader.
#[wasm_bindgen(js_name = parseManifest)]
pub fn parse_manifest(json_or_object: JsValue) -> Result<JsValue, JsValue> {
    to_js(&manifest_from(json_or_object)?)
}

/// The passport to show next to the data: `{model, answerable, answerableLimitedBy, caveats,
/// completeThrough, limitedBy, hasGaps, declaredOnly}`.
#[wasm_bindgen(js_name = passportOf)]
pub fn passport_of(manifest: JsValue) -> Result<JsValue, JsValue> {
    to_js(&reader::passport_of(&manifest_from(manifest)?))
}

/// May this data be shown as current at `now_iso`, allowing `max_lag_seconds`? Returns
/// `{fresh, status, lagSeconds, completeThrough, limitedBy, reason}`.
#[wasm_bindgen(js_name = checkFreshness)]
pub fn check_freshness(
    manifest: JsValue,
    now_iso: &str,
    max_lag_seconds: f64,
) -> Result<JsValue, JsValue> {
    let m = manifest_from(manifest)?;
    let now = efmesh_core::time::parse_instant(now_iso)
        .map_err(|e| error("EFMESH_BAD_ARGUMENT", &format!("nowIso: {e}")))?;
    if !max_lag_seconds.is_finite() || max_lag_seconds < 0.0 {
        return Err(error(
            "EFMESH_BAD_ARGUMENT",
            &format!("maxLagSeconds must be a non-negative number, got {max_lag_seconds}"),
        ));
    }
    to_js(&reader::check_freshness(&m, now, max_lag_seconds as i64))
}

/// The absolute URL of every file of the manifest, resolved against the URL it was fetched from.
#[wasm_bindgen(js_name = resolveFiles)]
pub fn resolve_files(manifest_url: &str, manifest: JsValue) -> Result<Vec<String>, JsValue> {
    Ok(reader::resolve_files(
        manifest_url,
        &manifest_from(manifest)?,
    ))
}

/// The name under which to register the file at `url` in duckdb-wasm: fixed-length, so no
/// name is a prefix of another (duckdb-wasm issue 2227).
#[wasm_bindgen(js_name = fileAlias)]
pub fn file_alias(url: &str) -> String {
    reader::file_alias(url)
}

/// `{name, statements}`: the statements that create the view `name` (`table` or
/// `schema.table`) over the registered `aliases`, typed and empty when the version has no
/// files yet, and the view's quoted name.
#[wasm_bindgen(js_name = relationSql)]
pub fn relation_sql(
    name: &str,
    aliases: Vec<String>,
    manifest: JsValue,
) -> Result<JsValue, JsValue> {
    let m = manifest_from(manifest)?;
    let relation = reader::relation_sql(name, &aliases, &m.schema).map_err(|why| {
        error(
            "EFMESH_MANIFEST_INVALID",
            &format!("malformed manifest: {why}"),
        )
    })?;
    to_js(&relation)
}

fn manifest_from(v: JsValue) -> Result<Manifest, JsValue> {
    // An object is turned into text by the JavaScript engine, whose JSON.stringify refuses
    // what it cannot write (cycles, too deep) with an exception, rather than walked by a
    // recursive bridge: a 5,000-deep object used to overflow the module's stack and leave it
    // broken for every later call. The text then meets serde_json's nesting limit and ours.
    let text = match v.as_string() {
        Some(text) => text,
        None => js_sys::JSON::stringify(&v)
            .map_err(|e| {
                let why = e
                    .dyn_ref::<js_sys::Error>()
                    .map(|e| String::from(e.message()))
                    .unwrap_or_default();
                error(
                    "EFMESH_MANIFEST_INVALID",
                    &format!("malformed manifest: not JSON-serialisable ({why})"),
                )
            })?
            .as_string()
            .ok_or_else(|| {
                error(
                    "EFMESH_MANIFEST_INVALID",
                    "malformed manifest: not a JSON object",
                )
            })?,
    };
    let parsed = Manifest::parse(&text);
    parsed.map_err(|e| {
        let code = match e {
            ManifestError::Newer { .. } => "EFMESH_MANIFEST_NEWER",
            ManifestError::Malformed(_) => "EFMESH_MANIFEST_INVALID",
        };
        error(code, &e.to_string())
    })
}

fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| error("EFMESH_INTERNAL", &e.to_string()))
}

/// A JavaScript `Error` with a `code` property a caller can branch on.
fn error(code: &str, message: &str) -> JsValue {
    let e = js_sys::Error::new(message);
    let _ = js_sys::Reflect::set(&e, &JsValue::from_str("code"), &JsValue::from_str(code));
    e.into()
}
