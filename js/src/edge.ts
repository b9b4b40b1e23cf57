/**
 * Edge entry (`exports` conditions `workerd`, `edge-light`, `worker`): the `bundler`
 * wasm-bindgen build, which imports its `.wasm` as a module the way Cloudflare Workers, Vercel
 * Edge and bundlers (and Node with `--experimental-wasm-modules`) load WebAssembly.
 */
import * as wasm from "../wasm/bundler/efmesh_wasm.js";
import { bindWasm, type WasmExports } from "./binding.js";

bindWasm(wasm as unknown as WasmExports);

export * from "./api.js";
export * from "./passport-view.js";
export type * from "./types.js";
/** Which wasm build this entry uses. */
export const BUILD = "bundler";
