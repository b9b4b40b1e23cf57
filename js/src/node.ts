/**
 * Node entry (`exports` condition `node`): the `nodejs` wasm-bindgen build, which loads its
 * `.wasm` synchronously from disk.
 */
import { createRequire } from "node:module";
import { bindWasm, type WasmExports } from "./binding.js";

bindWasm(createRequire(import.meta.url)("../wasm/nodejs/efmesh_wasm.js") as WasmExports);

export * from "./api.js";
export * from "./passport-view.js";
export type * from "./types.js";
/** Which wasm build this entry uses. */
export const BUILD = "nodejs";
