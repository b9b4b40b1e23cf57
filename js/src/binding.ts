/**
 * The wasm-bindgen build the package runs on. Each entry (`node.ts`, `browser.ts`, `edge.ts`)
 * loads its build and binds it here once; `api.ts` calls whichever is bound. Every decision
 * (validation, passport, freshness, file URLs, the view's SQL) is made by efmesh-core in
 * WebAssembly, so a browser reaches the same verdict as `efmesh passport`.
 */

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

let wasm: WasmExports | undefined;

/** The manifest format this reader understands; newer manifests are refused. */
export let MANIFEST_VERSION = 0;
/** The package (and efmesh) version. */
export let VERSION = "";

/** Bind the entry's wasm build; called once by each entry before it exports the API. */
export function bindWasm(build: WasmExports): void {
  wasm = build;
  MANIFEST_VERSION = build.MANIFEST_VERSION();
  VERSION = build.PACKAGE_VERSION();
}

/** The bound build. */
export function bound(): WasmExports {
  if (!wasm) throw new Error("@efmesh/lake: import the package (or one of its entries), not dist/api.js");
  return wasm;
}
