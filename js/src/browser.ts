/**
 * Browser entry (`exports` conditions `browser` and `default`): the `web` wasm-bindgen build,
 * which fetches its `.wasm` next to this module. Importing the module waits for it once.
 */
import init, * as wasm from "../wasm/web/efmesh_wasm.js";
import { bindWasm, type WasmExports } from "./binding.js";

await init();
bindWasm(wasm as unknown as WasmExports);

export * from "./api.js";
export * from "./passport-view.js";
export type * from "./types.js";
/** Which wasm build this entry uses. */
export const BUILD = "web";
