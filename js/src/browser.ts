/**
 * Browser entry (`exports` conditions `browser` and `default`): the `web` wasm-bindgen build,
 * which fetches its `.wasm` next to this module. Importing the module waits for it once.
 */
import init, * as wasm from "../wasm/web/efmesh_wasm.js";
import { makeReader, type WasmExports } from "./api.js";

await init();
const reader = makeReader(wasm as unknown as WasmExports);

export const {
  MANIFEST_VERSION,
  VERSION,
  parseManifest,
  fetchManifest,
  passportOf,
  checkFreshness,
  resolveFiles,
  registerModel,
} = reader;
/** Which wasm build this entry uses. */
export const BUILD = "web";
export type * from "./types.js";
export type { Reader, FetchOptions, RegisterOptions, EfmeshError } from "./api.js";
