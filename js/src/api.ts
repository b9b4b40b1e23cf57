/**
 * The reader's API, over whichever wasm-bindgen build the entry bound (`binding.ts`). Its only
 * code of its own is I/O: `fetch` and duckdb-wasm calls.
 */
import type { AsyncDuckDBLike, FreshnessVerdict, Manifest, Passport } from "./types.js";
import { bound } from "./binding.js";

export { MANIFEST_VERSION, VERSION } from "./binding.js";

/** duckdb-wasm's `DuckDBDataProtocol.HTTP`; a constant so the package needs no runtime import. */
const DUCKDB_PROTOCOL_HTTP = 4;

/** Options of {@link fetchManifest}. */
export interface FetchOptions {
  /** A `fetch` to use instead of the global one (a test double, an authenticated fetch). */
  fetch?: typeof globalThis.fetch;
}

/** Options of {@link registerModel}. */
export interface RegisterOptions {
  /** The relation's name, `table` or `schema.table`; the model's own name by default. */
  name?: string;
}

/** An `Error` with the stable `code` the wasm attaches. */
export interface EfmeshError extends Error {
  code: string;
}

function codedError(code: string, message: string): EfmeshError {
  const e = new Error(message) as EfmeshError;
  e.code = code;
  return e;
}

/** An absolute URL where the platform has a base (a page); the URL as given otherwise. */
function absolute(url: string | URL): string {
  const base = (globalThis as { location?: { href: string } }).location?.href;
  try {
    return new URL(String(url), base).href;
  } catch {
    return String(url);
  }
}

/** Validate a manifest (JSON text or object). Throws `EFMESH_MANIFEST_INVALID` or `EFMESH_MANIFEST_NEWER`. */
export function parseManifest(jsonOrObject: string | object): Manifest {
  return bound().parseManifest(jsonOrObject) as Manifest;
}

/** The one fetch a client needs before it reads data. */
export async function fetchManifest(url: string | URL, options: FetchOptions = {}): Promise<Manifest> {
  const f = options.fetch ?? globalThis.fetch;
  const href = absolute(url);
  let response: Response;
  try {
    response = await f(href);
  } catch (e) {
    throw codedError("EFMESH_FETCH", `could not fetch the manifest ${href}: ${(e as Error).message}`);
  }
  if (!response.ok) {
    throw codedError(
      "EFMESH_FETCH",
      `fetching the manifest ${href} answered ${response.status} ${response.statusText}`.trim(),
    );
  }
  return parseManifest(await response.text());
}

/** The passport to render: effective when present, declared otherwise. */
export function passportOf(manifest: Manifest | string): Passport {
  return bound().passportOf(manifest) as Passport;
}

/** May this data be shown as current? `now` defaults to the current time. */
export function checkFreshness(
  manifest: Manifest | string,
  now: Date | string = new Date(),
  maxLagSeconds = 86_400,
): FreshnessVerdict {
  const iso = now instanceof Date ? now.toISOString() : now;
  return bound().checkFreshness(manifest, iso, maxLagSeconds) as FreshnessVerdict;
}

/** Absolute file URLs, resolved against the manifest's URL. */
export function resolveFiles(manifestUrl: string | URL, manifest: Manifest | string): string[] {
  return bound().resolveFiles(absolute(manifestUrl), manifest);
}

/** Register the version's files in duckdb-wasm and create a view over them; returns its quoted name. */
export async function registerModel(
  db: AsyncDuckDBLike,
  manifestUrl: string | URL,
  manifest: Manifest | string,
  options: RegisterOptions = {},
): Promise<string> {
  const w = bound();
  const m = parseManifest(manifest);
  const urls = w.resolveFiles(absolute(manifestUrl), m);
  const aliases = urls.map((u) => w.fileAlias(u));
  for (let i = 0; i < urls.length; i++) {
    // registering the same alias for the same URL again is harmless: the alias is the URL's hash
    await db.registerFileURL(aliases[i], urls[i], DUCKDB_PROTOCOL_HTTP, false);
  }
  const relation = w.relationSql(options.name ?? m.model, aliases, m);
  const conn = await db.connect();
  try {
    for (const sql of relation.statements) await conn.query(sql);
  } finally {
    await conn.close();
  }
  return relation.name;
}
