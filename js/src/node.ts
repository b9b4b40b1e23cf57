/**
 * Node entry (`exports` condition `node`): the `nodejs` wasm-bindgen build, which loads its
 * `.wasm` synchronously from disk.
 */
import { createRequire } from "node:module";
import { makeReader, type WasmExports } from "./api.js";

const require = createRequire(import.meta.url);
const wasm = require("../wasm/nodejs/efmesh_wasm.js") as WasmExports;
const reader = makeReader(wasm);

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
export const BUILD = "nodejs";
export type * from "./types.js";
export type { Reader, FetchOptions, RegisterOptions, EfmeshError } from "./api.js";
