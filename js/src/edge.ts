/**
 * Edge entry (`exports` conditions `workerd`, `edge-light`, `worker`): the `bundler`
 * wasm-bindgen build, which imports its `.wasm` as a module the way Cloudflare Workers, Vercel
 * Edge and bundlers (and Node with `--experimental-wasm-modules`) load WebAssembly.
 */
import * as wasm from "../wasm/bundler/efmesh_wasm.js";
import { makeReader, type WasmExports } from "./api.js";

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
export const BUILD = "bundler";
export type * from "./types.js";
export type { Reader, FetchOptions, RegisterOptions, EfmeshError } from "./api.js";
