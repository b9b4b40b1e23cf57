// Serve the handler under Node: MANIFEST_URL=https://…/manifest.json node serve.mjs
import { createServer } from "node:http";
import { createHandler } from "./handler.mjs";

const handle = createHandler({
  manifestUrl: process.env.MANIFEST_URL,
  maxLagSeconds: Number(process.env.MAX_LAG_SECONDS ?? 86_400),
});
const port = Number(process.env.PORT ?? 8787);
createServer(async (req, res) => {
  const response = await handle(new Request(`http://localhost:${port}${req.url}`, { method: req.method }));
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(await response.text());
}).listen(port, () => console.log(`edge-freshness on http://localhost:${port}/`));
