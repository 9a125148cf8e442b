// ts-resources-client.mjs: the official TypeScript SDK's client against a
// running Hearth (TestResourcesFromTypeScriptSDK runs it). For each
// conversation named on the command line it lists every page of
// resources/list and reads every listed resource, sending the conversation
// in _meta["hearth/conversation"]; then it reads each conversation's URIs
// from the other one and records the errors; it writes the first
// conversation's evidence bundle to BUNDLE_OUT and prints a JSON report.
//
// usage: node ts-resources-client.mjs URL BUNDLE_OUT CONV_A CONV_B
// HEARTH_TS_SDK names the @modelcontextprotocol/sdk package directory.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const sdk = process.env.HEARTH_TS_SDK;
const load = (p) => import(pathToFileURL(join(sdk, "dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const [url, bundleOut, ...convs] = process.argv.slice(2);
const client = new Client({ name: "hearth-ts-resources-test", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const meta = (conv) => ({ "hearth/conversation": conv });
const report = { protocol: client.getServerCapabilities()?.resources ? "resources declared" : "no resources capability", lists: {}, pages: {}, reads: {}, cross: [] };

for (const conv of convs) {
  const uris = [];
  let cursor, pages = 0;
  do {
    const res = await client.listResources({ cursor, _meta: meta(conv) });
    pages++;
    for (const r of res.resources) uris.push(r.uri);
    cursor = res.nextCursor;
  } while (cursor && pages < 100);
  report.lists[conv] = uris;
  report.pages[conv] = pages;
  report.reads[conv] = {};
  for (const uri of uris) {
    const res = await client.readResource({ uri, _meta: meta(conv) });
    const c = res.contents[0];
    report.reads[conv][uri] = { mimeType: c.mimeType, text: typeof c.text === "string" ? c.text.length : null, blob: typeof c.blob === "string" ? c.blob.length : null };
    if (conv === convs[0] && uri.endsWith("/evidence")) writeFileSync(bundleOut, c.text);
  }
}

// Each conversation's URIs read from the other: every read must fail.
for (const [from, to] of [[convs[0], convs[1]], [convs[1], convs[0]]]) {
  for (const uri of report.lists[from]) {
    try {
      await client.readResource({ uri, _meta: meta(to) });
      report.cross.push({ uri, in: to, ok: true });
    } catch (e) {
      report.cross.push({ uri, in: to, ok: false, code: e.code, message: e.message });
    }
  }
}
await client.close();
console.log(JSON.stringify(report));
