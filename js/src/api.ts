/**
 * The reader's API, bound to one of the three wasm-bindgen builds (`nodejs`, `web`, `bundler`).
 * Every decision (validation, passport, freshness, file URLs, the view's SQL) is made by
 * efmesh-core in WebAssembly, so a browser reaches the same verdict as `efmesh passport`.
 */
import type {
  AsyncDuckDBLike,
  FreshnessVerdict,
  Manifest,
  Passport,
} from "./types.js";

/** What each wasm-bindgen build exports (see `wasm/src/lib.rs`). */
export interface WasmExports {
  parseManifest(jsonOrObject: unknown): unknown;
  passportOf(manifest: unknown): unknown;
  checkFreshness(manifest: unknown, nowIso: string, maxLagSeconds: number): unknown;
  resolveFiles(manifestUrl: string, manifest: unknown): string[];
  fileAlias(url: string): string;
  relationSql(name: string, aliases: string[], manifest: unknown): { name: string; statements: string[] };
  MANIFEST_VERSION(): number;
  PACKAGE_VERSION(): string;
}

/** duckdb-wasm's `DuckDBDataProtocol.HTTP`; a constant so the package needs no runtime import. */
const DUCKDB_PROTOCOL_HTTP = 4;

/** Options of {@link Reader.fetchManifest}. */
export interface FetchOptions {
  /** A `fetch` to use instead of the global one (a test double, an authenticated fetch). */
  fetch?: typeof globalThis.fetch;
}

/** Options of {@link Reader.registerModel}. */
export interface RegisterOptions {
  /** The relation's name, `table` or `schema.table`; the model's own name by default. */
  name?: string;
}

/** The reader, as each entry point exports it. */
export interface Reader {
  /** The manifest format this reader understands; newer manifests are refused. */
  MANIFEST_VERSION: number;
  /** The package (and efmesh) version. */
  VERSION: string;
  /** Validate a manifest (JSON text or object). Throws `EFMESH_MANIFEST_INVALID` or `EFMESH_MANIFEST_NEWER`. */
  parseManifest(jsonOrObject: string | object): Manifest;
  /** The one fetch a client needs before it reads data. */
  fetchManifest(url: string | URL, options?: FetchOptions): Promise<Manifest>;
  /** The passport to render: effective when present, declared otherwise. */
  passportOf(manifest: Manifest | string): Passport;
  /** May this data be shown as current? `now` defaults to the current time. */
  checkFreshness(manifest: Manifest | string, now?: Date | string, maxLagSeconds?: number): FreshnessVerdict;
  /** Absolute file URLs, resolved against the manifest's URL. */
  resolveFiles(manifestUrl: string | URL, manifest: Manifest | string): string[];
  /** Register the version's files in duckdb-wasm and create a view over them; returns its quoted name. */
  registerModel(db: AsyncDuckDBLike, manifestUrl: string | URL, manifest: Manifest | string, options?: RegisterOptions): Promise<string>;
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

/** Build the reader over one wasm build. */
export function makeReader(w: WasmExports): Reader {
  const parse = (m: Manifest | string | object): Manifest => w.parseManifest(m) as Manifest;
  return {
    MANIFEST_VERSION: w.MANIFEST_VERSION(),
    VERSION: w.PACKAGE_VERSION(),
    parseManifest: parse,
    async fetchManifest(url, options = {}) {
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
      return parse(await response.text());
    },
    passportOf: (m) => w.passportOf(m) as Passport,
    checkFreshness(m, now = new Date(), maxLagSeconds = 86_400) {
      const iso = now instanceof Date ? now.toISOString() : now;
      return w.checkFreshness(m, iso, maxLagSeconds) as FreshnessVerdict;
    },
    resolveFiles: (manifestUrl, m) => w.resolveFiles(absolute(manifestUrl), m),
    async registerModel(db, manifestUrl, manifest, options = {}) {
      const m = parse(manifest);
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
    },
  };
}
